// The module host: a Bun process that serves the calls of ONE agent, one call at a time, each in a
// Worker of its own (call_worker.ts) that is terminated once its answer is in (daemon/host/module_host.py
// starts the process ahead of time, confined, init of a PID namespace of its own, and kills it —
// the kernel then kills every process of the namespace — when a call fails in a way the Worker
// cannot contain, times out, loses its client, or leaves a process behind). Nothing of a call — a
// global, a module instance, a patched built-in, a timer — reaches another: each Worker is a realm
// of its own, and another agent's calls run in other processes. (A load report has a host of its
// own, probe_host.ts.)
//
// The channel is fd 3 (one end of a socket pair), never fd 1: a module's console output and
// process.stdout/stderr go to the daemon's log. Frames: a 4-byte big-endian length, then that
// many bytes. The daemon sends JSON frames:
//   {"op": "call", "id", "module", "args", "env", "cwd", "max_output", "aborts": {"timed_out", "gone"}}
//                                                       run execute(args, context) in a new Worker;
//                                                       then the next call, until the channel closes
//                                                       (SIGALRM and SIGHUP abort the running call's
//                                                       context.signal with the texts of "aborts")
// and reads JSON frames:
//   {"op": "result", "id", "ok": true} followed by one raw frame: the output's UTF-8 bytes, or
//   {"op": "result", "id", "ok": false, "reason": "thrown" | "crashed" | "too_large" | "bad_request", "error"}
//     ("id" is the call's: a module that writes frames to fd 3 itself cannot know it, so a forged
//     answer is told from the host's)
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

// The host's own failure (never a call's: those happen in a Worker): say so and end.
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
function runIn(worker: Worker, request: any): { answer: Promise<Answer>; closed: Promise<void>; abort: (kind: string) => void } {
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
  const { module, args, env, cwd, max_output: maxOutput, aborts } = request
  worker.postMessage({ module, args, env, cwd, maxOutput })
  const abort = (kind: string) => worker.postMessage({ abort: kind, reason: String(aborts?.[kind] ?? '') })
  return { answer, closed, abort }
}

// The daemon's word that the running call is over for its caller: SIGALRM when it ran past its
// timeout, SIGHUP when its client went away. Its Worker's context.signal aborts; once the module
// has answered, this process exits (the daemon takes no answer of that call and ends the process
// and what it started after its grace period in any case). A signal sent while no call runs is
// about none: the daemon sends them only to a process it will not use again.
let abortCall: ((kind: string) => void) | null = null
let aborted = false
for (const [signal, kind] of [['SIGALRM', 'timed_out'], ['SIGHUP', 'gone']] as const) {
  process.on(signal, () => {
    if (abortCall === null || aborted) return
    aborted = true
    abortCall(kind)
  })
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
    abortCall = call.abort
    worker = new Worker(WORKER) // the next call's, loading while this one runs
    const answer = await call.answer
    abortCall = null
    if (aborted) process.exit(0)
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

let request: any
try {
  request = receive()
} catch (error) {
  send({ op: 'result', id: null, ok: false, reason: 'bad_request', error: messageOf(error) })
  process.exit(2)
}
await serve(request)
