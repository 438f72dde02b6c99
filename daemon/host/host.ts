// The module host: a Bun process that serves the calls of ONE agent, one call at a time, each in a
// Worker of its own (call_worker.ts) that is terminated once its answer is in (daemon/host/module_host.py
// starts the process ahead of time, confined, init of a PID namespace of its own, and kills it —
// the kernel then kills every process of the namespace — when a call fails in a way the Worker
// cannot contain, times out, loses its client, or leaves a process behind). Nothing of a call — a
// global, a module instance, a patched built-in, a timer — reaches another: each Worker is a realm
// of its own, and another agent's calls run in other processes.
//
// The channel is fd 3 (one end of a socket pair), never fd 1: a module's console output and
// process.stdout/stderr go to the daemon's log. Frames: a 4-byte big-endian length, then that
// many bytes. The daemon sends JSON frames:
//   {"op": "call", "id", "module", "args", "env", "cwd", "max_output"}
//                                                       run execute(args, context) in a new Worker;
//                                                       then the next call, until the channel closes
//   {"op": "probe", "tools": [{"name", "module"}]}     load each module, call nothing (the session's
//                                                       load report, `beeuni validate --modules`)
//   {"op": "probe", "tools": [...], "opencode": {"zod": [{"package", "member"}]}}
//                                                       the same for opencode custom tool files
//                                                       (`beeuni tools migrate`): describe every export
// and reads JSON frames:
//   {"op": "result", "id", "ok": true} followed by one raw frame: the output's UTF-8 bytes, or
//   {"op": "result", "id", "ok": false, "reason": "thrown" | "crashed" | "too_large" | "bad_request", "error"}
//     ("id" is the call's: a module that writes frames to fd 3 itself cannot know it, so a forged
//     answer is told from the host's)
//   {"op": "probing", "name"} before each module of a probe, then
//   {"op": "probed", "name", "ok", "error", "description", "parameters"}, and {"op": "probe_done"}
//     (for opencode files: "exports": [{"export", "tool", "description", "parameters", "problem", "error"}])
// This file knows no tool: what to load, and the texts of the daemon's answers, come from it.

import { readSync, writeSync } from 'node:fs'

const CHANNEL = 3
const MAX_REQUEST = 64 * 1024 * 1024 // the daemon's arguments are bounded far below this
const MAX_ERROR = 64 * 1024 // characters of a thrown message that are sent

const encoder = new TextEncoder()

function readExactly(size: number): Uint8Array {
  const buffer = new Uint8Array(size)
  let filled = 0
  while (filled < size) {
    const got = readSync(CHANNEL, buffer, filled, size - filled, null)
    if (got === 0) process.exit(0) // the daemon closed the channel: nothing to do
    filled += got
  }
  return buffer
}

function receive(): any {
  const header = readExactly(4)
  const size = new DataView(header.buffer).getUint32(0)
  if (size > MAX_REQUEST) process.exit(2)
  return JSON.parse(new TextDecoder().decode(readExactly(size)))
}

function sendBytes(bytes: Uint8Array) {
  const frame = new Uint8Array(4 + bytes.length)
  new DataView(frame.buffer).setUint32(0, bytes.length)
  frame.set(bytes, 4)
  let sent = 0
  while (sent < frame.length) sent += writeSync(CHANNEL, frame, sent, frame.length - sent)
}

function send(message: unknown) {
  sendBytes(encoder.encode(JSON.stringify(message)))
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR)
}

// The host's own failure (never a module's: those happen in a Worker): say so and end.
function hostFailed(error: unknown) {
  send({ op: 'result', id: null, ok: false, reason: 'crashed', error: `the host failed: ${messageOf(error)}` })
  process.exit(1)
}
process.on('uncaughtException', hostFailed)
process.on('unhandledRejection', hostFailed)

const WORKER = new URL('./call_worker.ts', import.meta.url).href

type Answer = { ok: true; output: Uint8Array } | { ok: false; reason: string; error: string }

// Run one call in `worker`: its answer, or how the Worker ended without one. The answer comes once
// the Worker is told to stop (JavaScriptCore stops it at its next instruction), `closed` once its
// realm is torn down, which takes longer than most calls: the next call does not wait for it.
function runIn(worker: Worker, request: any): { answer: Promise<Answer>; closed: Promise<void> } {
  let settle: (found: Answer) => void = () => {}
  const answer = new Promise<Answer>((resolve) => {
    let settled = false
    settle = (found) => {
      if (settled) return
      settled = true
      worker.terminate()
      resolve(found)
    }
  })
  const closed = new Promise<void>((resolve) => {
    worker.addEventListener('close', (event: any) => {
      settle({ ok: false, reason: 'crashed', error: `exit code ${event.code ?? 0}` })
      resolve()
    })
  })
  worker.addEventListener('message', (event: MessageEvent) => settle(event.data))
  worker.addEventListener('error', (event: ErrorEvent) => {
    event.preventDefault()
    settle({ ok: false, reason: 'crashed', error: `uncaught exception: ${event.message}` })
  })
  const { module, args, env, cwd, max_output: maxOutput } = request
  worker.postMessage({ module, args, env, cwd, maxOutput })
  return { answer, closed }
}

async function serve(first: any) {
  let worker = new Worker(WORKER) // started ahead of its call, so that the call does not wait for it to load
  let tearingDown: Promise<void> = Promise.resolve() // the call before's Worker: one at a time
  for (let request = first; ; request = receive()) {
    if (request?.op !== 'call') {
      send({ op: 'result', id: request?.id ?? null, ok: false, reason: 'bad_request', error: `unknown request ${String(request?.op)}` })
      process.exit(2)
    }
    process.chdir(request.cwd) // a module's chdir in the call before does not move this one
    const call = runIn(worker, request)
    worker = new Worker(WORKER) // the next call's, loading while this one runs
    const answer = await call.answer
    if (answer.ok) {
      send({ op: 'result', id: request.id, ok: true })
      sendBytes(answer.output)
    } else {
      send({ op: 'result', id: request.id, ok: false, reason: answer.reason, error: answer.error })
    }
    await tearingDown
    tearingDown = call.closed
  }
}

function problemOf(tool: any): string | null {
  if (tool === undefined || tool === null) return 'the module has no default export'
  if (typeof tool !== 'object') return `the default export is a ${typeof tool}, not a plain object { description, parameters, execute }`
  if (typeof tool.execute !== 'function') return 'the default export has no execute(args, context) function'
  const parameters = tool.parameters
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters) || parameters.type !== 'object')
    return '`parameters` is not a JSON Schema object schema ({ type: "object", properties: {...} })'
  return null
}

// One module at a time, each announced first: the caller's watchdog knows which module an import
// that never ends belongs to (a loop at import blocks this process; only a kill stops it).
async function probe(entries: { name: string; module: string }[], opencode?: { zod: ZodSource[] }) {
  for (const { name, module } of entries) {
    send({ op: 'probing', name })
    try {
      if (!(await Bun.file(module).exists())) throw new Error(`${module} does not exist`)
      const loaded = await import(module)
      if (opencode) {
        send({ op: 'probed', name, ok: true, exports: await describeExports(loaded, module, opencode.zod) })
        continue
      }
      const tool = loaded.default
      const problem = problemOf(tool)
      if (problem) throw new Error(problem)
      const parameters = JSON.parse(JSON.stringify(tool.parameters))
      send({ op: 'probed', name, ok: true, description: String(tool.description ?? ''), parameters })
    } catch (error) {
      send({ op: 'probed', name, ok: false, error: messageOf(error) })
    }
  }
  send({ op: 'probe_done' })
  process.exit(0)
}

// Where the zod of an opencode tool file is found: a package resolved from the file's folder and
// the member that is zod (the rules name them).
type ZodSource = { package: string; member: string }

async function zodOf(module: string, sources: ZodSource[]): Promise<any> {
  const folder = module.slice(0, module.lastIndexOf('/'))
  for (const source of sources) {
    try {
      let found: any = await import(Bun.resolveSync(source.package, folder))
      for (const part of source.member.split('.')) found = found?.[part]
      if (typeof found?.toJSONSchema === 'function' && typeof found?.object === 'function') return found
    } catch {
      // not installed there: try the next source
    }
  }
  return null
}

// Every export of an opencode custom tool file: is it a tool definition { description, args (a zod
// shape), execute }, and its args as JSON Schema — evaluated with the zod the file itself used.
async function describeExports(loaded: Record<string, any>, module: string, sources: ZodSource[]) {
  const described = []
  let z: any
  for (const [name, definition] of Object.entries(loaded)) {
    const tool = definition !== null && typeof definition === 'object' && typeof definition.execute === 'function'
      && definition.args !== null && typeof definition.args === 'object'
    if (!tool) {
      described.push({ export: name, tool: false })
      continue
    }
    z ??= await zodOf(module, sources)
    if (!z) {
      described.push({ export: name, tool: true, problem: 'no-zod' })
      continue
    }
    try {
      const parameters = z.toJSONSchema(z.object(definition.args), { io: 'input' })
      described.push({ export: name, tool: true, description: String(definition.description ?? ''), parameters })
    } catch (error) {
      described.push({ export: name, tool: true, problem: 'args', error: messageOf(error) })
    }
  }
  return described
}

let request: any
try {
  request = receive()
} catch (error) {
  send({ op: 'result', id: null, ok: false, reason: 'bad_request', error: messageOf(error) })
  process.exit(2)
}
if (request?.op === 'probe') await probe(request.tools, request.opencode)
else await serve(request)
