// The load report's host: a Bun process that loads the modules of ONE probe and calls nothing (the
// session's load report, `beeuni validate --modules`, `beeuni tools migrate`); daemon/host/probe.py
// starts it confined like a call's host (host.ts) and reads its frames. A project's module has a
// process of its own; beeuni's own modules share one, each in a ShadowRealm of its own.
//
// The channel is fd 3 (one end of a socket pair), never fd 1: what a module prints goes to the
// daemon's log or nowhere. Frames: a 4-byte big-endian length, then that many bytes of JSON. It
// reads one frame:
//   {"op": "probe", "token", "limit", "tools": [{"name", "module"}]}
//                                     load each module (`limit` seconds each): in a realm of its
//                                     own (probe_realm.ts), or, one alone, beside this host
//   {"op": "probe", ..., "opencode": {"zod": [{"package", "member"}]}}
//                                     the same for opencode custom tool files (`beeuni tools
//                                     migrate`): describe every export
// and writes:
//   {"op": "probing", "token", "name"} before each module, then
//   {"op": "probed", "token", "name", "ok", "problem", "error", "description", "parameters"} as each
//     module's realm reports (for opencode files: "exports": [{"export", "tool", "description",
//     "parameters", "problem", "error"}]; "problem": "timed-out" when it did not), and
//   {"op": "probe_done", "token"}, or {"op": "probe_failed", "token", "error"} when an error a
//     module threw escaped its realm ("token" is the probe's: a module that writes frames to fd 3
//     itself cannot know it)
// It reads and writes fd 3 with Bun's own file API, never node:fs, whose first use costs a process
// some 2.5 ms of CPU (its module is made then): a lone module's process, in its box, takes 8.0 ms
// of CPU so, 9.9 ms with the call host's node:fs channel (a load of 20 modules, three runs each).
// This file knows no tool: what to load, and the texts of the daemon's answers, come from it.

const CHANNEL = Bun.file(3)
const MAX_REQUEST = 64 * 1024 * 1024 // the daemon's requests are bounded far below this
const MAX_ERROR = 64 * 1024 // characters of a thrown message that are sent
const PROBE_REALM = `${import.meta.dir}/probe_realm.ts`

const encoder = new TextEncoder()

// The one request: the first frame on the channel (the daemon sends nothing after it). A channel
// closed before it, or a frame larger than any request, ends the process.
async function receive(): Promise<any> {
  const reader = CHANNEL.stream().getReader()
  let held = new Uint8Array(0)
  for (;;) {
    const { value, done } = await reader.read()
    if (done) process.exit(0) // the daemon closed the channel: nothing to do
    const grown = new Uint8Array(held.length + value.length)
    grown.set(held)
    grown.set(value, held.length)
    held = grown
    if (held.length < 4) continue
    const size = new DataView(held.buffer).getUint32(0)
    if (size > MAX_REQUEST) process.exit(2)
    if (held.length >= 4 + size) return JSON.parse(new TextDecoder().decode(held.subarray(4, 4 + size)))
  }
}

// Frames go out one after the other, each whole (Bun.write writes all of it).
let sending: Promise<unknown> = Promise.resolve()
function send(message: unknown): Promise<unknown> {
  const bytes = encoder.encode(JSON.stringify(message))
  const frame = new Uint8Array(4 + bytes.length)
  new DataView(frame.buffer).setUint32(0, bytes.length)
  frame.set(bytes, 4)
  sending = sending.then(() => Bun.write(CHANNEL, frame))
  return sending
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR)
}

// Modules run in realms of this thread, so an error one of them throws later (a timer's, a
// promise nobody handles) ends up here: it ends the probe, with its token.
let probeToken: string | null = null
async function probeFailed(error: unknown) {
  if (probeToken !== null) await send({ op: 'probe_failed', token: probeToken, error: `uncaught exception: ${messageOf(error)}` })
  process.exit(1)
}
process.on('uncaughtException', probeFailed)
process.on('unhandledRejection', probeFailed)

// The load report, each module in a ShadowRealm of its own (probe_realm.ts), one after the other:
// a realm has its own globals, built-ins and module instances (node: modules and Bun included),
// and only strings and functions cross its edge. No module's code runs in this realm, so what
// this realm sends — each report parsed, checked and serialised by its own JSON, carrying the
// probe's token — is what the module's own realm reported, and no other module's. A module whose
// report does not come within `limit` seconds is reported timed out. Frames a module writes on
// fd 3 itself lack the token, which only this realm holds; those, a loop that blocks this
// process and a process that dies all make the daemon load each module not reported yet in a
// process of its own (probe.py).
// A probe of one module — every module of a project has a process of its own — needs no realm:
// whatever the module bends in this process, the daemon takes from it no report but its own,
// which its export decides anyway; so it is imported here, which saves a realm's start.
async function probe(request: any) {
  const { token, tools, limit, opencode } = request
  probeToken = String(token)
  const entries: { name: string; module: string }[] = Array.isArray(tools) ? tools : []
  const alone = entries.length === 1
  for (const { name, module } of entries) {
    await send({ op: 'probing', token, name: String(name) }) // its limit runs from here
    const found = await reportOf(String(module), opencode ? JSON.stringify(opencode) : '', Number(limit) * 1000, alone)
    await send({ op: 'probed', token, name: String(name), ...found })
  }
  await send({ op: 'probe_done', token })
  process.exit(0)
}

// One module's report from its realm (or, `alone`, from this one), as plain data of this realm.
async function reportOf(module: string, opencode: string, limit: number, alone: boolean): Promise<Record<string, unknown>> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<string | null>((resolve) => {
    timer = setTimeout(() => resolve(null), limit)
  })
  const reported = (async () => {
    const describe = alone
      ? (await import(PROBE_REALM)).describe
      : await new (globalThis as any).ShadowRealm().importValue(PROBE_REALM, 'describe')
    return await new Promise<string>((resolve) => describe(module, opencode, resolve))
  })()
  try {
    const text = await Promise.race([reported, timedOut])
    if (text === null) return { ok: false, problem: 'timed-out' }
    return checked(JSON.parse(String(text)), opencode !== '')
  } catch (error) {
    return { ok: false, error: messageOf(error) }
  } finally {
    clearTimeout(timer)
  }
}

// A realm's report, as this realm reads it: only the fields a report has, each of its type.
function checked(data: any, opencode: boolean): Record<string, unknown> {
  if (data === null || typeof data !== 'object') return { ok: false, error: 'the probe posted no report' }
  if (data.ok !== true) return { ok: false, error: String(data.error ?? '').slice(0, MAX_ERROR) }
  if (opencode) return { ok: true, exports: Array.isArray(data.exports) ? data.exports : [] }
  return { ok: true, description: String(data.description ?? ''), parameters: data.parameters ?? null }
}

const request = await receive().catch(() => process.exit(2))
if (request?.op !== 'probe') process.exit(2)
await probe(request)
