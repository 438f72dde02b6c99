// The module host: a Bun process that serves ONE request and is then thrown away (daemon/host.py
// starts it ahead of time, confined, and kills it with its process group once the answer is in).
// Nothing of a call — a global, a module instance, a patched built-in, a timer — reaches another.
//
// The channel is fd 3 (one end of a socket pair), never fd 1: a module's console output and
// process.stdout/stderr go to the daemon's log. Frames: a 4-byte big-endian length, then that
// many bytes. The daemon sends one JSON frame:
//   {"op": "call", "module", "args", "env", "cwd"}     import the module, run execute(args, context)
//   {"op": "probe", "tools": [{"name", "module"}]}     load each module, call nothing (the session's
//                                                       load report, `beeuni validate --modules`)
//   {"op": "probe", "tools": [...], "opencode": {"zod": [{"package", "member"}]}}
//                                                       the same for opencode custom tool files
//                                                       (`beeuni tools migrate`): describe every export
// and reads JSON frames:
//   {"op": "result", "ok": true} followed by one raw frame: the output's UTF-8 bytes (its size is what
//     the daemon's output cap checks, before reading it), or
//   {"op": "result", "ok": false, "reason": "thrown" | "crashed" | "bad_request", "error"}
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

// The call has one answer; whatever fails after it is sent no longer matters (the process is killed).
let answered = false
function fail(reason: string, error: unknown) {
  if (answered) return
  answered = true
  send({ op: 'result', ok: false, reason, error: messageOf(error) })
}
process.on('uncaughtException', (error) => {
  fail('crashed', `uncaught exception: ${messageOf(error)}`)
  process.exit(1)
})
process.on('unhandledRejection', (error) => {
  fail('crashed', `unhandled rejection: ${messageOf(error)}`)
  process.exit(1)
})

async function call(message: any) {
  const { module, args, env, cwd } = message
  let result: unknown
  try {
    const tool = (await import(module)).default
    result = await tool.execute(args ?? {}, { env: env ?? {}, signal: new AbortController().signal, cwd })
  } catch (error) {
    return fail('thrown', error)
  }
  let output: string
  try {
    output = typeof result === 'string' ? result : result === undefined ? '' : JSON.stringify(result, null, 2)
  } catch (error) {
    return fail('thrown', error)
  }
  if (answered) return
  answered = true
  send({ op: 'result', ok: true })
  sendBytes(encoder.encode(output))
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

// Answered (or failed): the process ends at once, so that none of the call's code — a pending
// timer, an open handle — runs on; the daemon kills its process group too.
let request: any
try {
  request = receive()
} catch (error) {
  fail('bad_request', error)
  process.exit(2)
}
if (request?.op === 'probe') await probe(request.tools, request.opencode)
else if (request?.op === 'call') await call(request)
else fail('bad_request', `unknown request ${String(request?.op)}`)
process.exit(0)
