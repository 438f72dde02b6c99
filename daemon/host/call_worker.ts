// One call of a tool module, in a Worker of its own (host.ts starts one per call and terminates it
// once the answer is in). A Worker is a JavaScript realm of its own: its globals, built-ins, module
// instances and timers are gone when it is terminated, and nothing of them reaches the next call.
//
// It receives one message, {module, args, env, cwd, maxOutput}, and posts one answer:
//   {ok: true, output: Uint8Array}                           the output's UTF-8 bytes (transferred)
//   {ok: false, reason: "thrown" | "crashed" | "too_large", error}
// and, while the call runs, maybe {abort: "timed_out" | "gone", reason}: the call ran past its
// timeout, or its caller went away. context.signal then aborts, with a DOMException of that text
// named TimeoutError or AbortError (what fetch rejects with); the module has the daemon's grace
// period to finish before the Worker and its processes are ended (host.ts, daemon/host/module_host.py).
// This file knows no tool: what to load comes with the message.

const MAX_ERROR = 64 * 1024 // characters of a thrown message that are sent

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR)
}

let answered = false
function answer(message: { ok: boolean; [key: string]: unknown }, transfer: Transferable[] = []) {
  if (answered) return
  answered = true
  postMessage(message, transfer)
}

process.on('uncaughtException', (error) => {
  answer({ ok: false, reason: 'crashed', error: `uncaught exception: ${messageOf(error)}` })
})
process.on('unhandledRejection', (error) => {
  answer({ ok: false, reason: 'crashed', error: `unhandled rejection: ${messageOf(error)}` })
})

const controller = new AbortController()
const ABORT_NAMES: Record<string, string> = { timed_out: 'TimeoutError', gone: 'AbortError' }

async function call(request: { module: string; args: unknown; env: Record<string, string>; cwd: string; maxOutput: number }) {
  let result: unknown
  try {
    const tool = (await import(request.module)).default
    result = await tool.execute(request.args ?? {}, { env: request.env ?? {}, signal: controller.signal, cwd: request.cwd })
  } catch (error) {
    return answer({ ok: false, reason: 'thrown', error: messageOf(error) })
  }
  let output: string
  try {
    output = typeof result === 'string' ? result : result === undefined ? '' : JSON.stringify(result, null, 2)
  } catch (error) {
    return answer({ ok: false, reason: 'thrown', error: messageOf(error) })
  }
  // a string of more characters than the cap has more bytes than it, too: no need to encode it
  if (output.length > request.maxOutput) return answer({ ok: false, reason: 'too_large', error: String(output.length) })
  const bytes = new TextEncoder().encode(output)
  if (bytes.length > request.maxOutput) return answer({ ok: false, reason: 'too_large', error: String(bytes.length) })
  answer({ ok: true, output: bytes }, [bytes.buffer])
}

let called = false
self.addEventListener('message', (event: MessageEvent) => {
  const { abort, reason } = event.data ?? {}
  if (typeof abort === 'string') {
    if (!controller.signal.aborted) controller.abort(new DOMException(String(reason ?? ''), ABORT_NAMES[abort] ?? 'AbortError'))
    return
  }
  if (called) return // one call per Worker
  called = true
  void call(event.data)
})
