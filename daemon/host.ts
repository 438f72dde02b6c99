// The module host: one long-lived Bun process that loads the session's tool modules and runs
// their calls, for the daemon (daemon/host.py).
//
// Protocol: one JSON object per line. The daemon writes to stdin:
//   {"op": "load", "tools": [{"name", "module"}]}        load every module (absolute paths)
//   {"op": "call", "id", "tool", "args", "env", "cwd", "timeout_ms"}
//   {"op": "cancel", "id"}                                abort a running call
//   {"op": "probe", "tools": [{"name", "module"}]}       load-only (`beeuni validate --modules`): load
//                                                         each module, call nothing, then exit
//   {"op": "probe", "tools": [...], "opencode": {"zod": [{"package", "member"}]}}
//                                                         the same for opencode custom tool files
//                                                         (`beeuni tools migrate`): describe every export
// and reads from stdout:
//   {"op": "loaded", "tools": {name: {description, parameters}}, "failed": {name: reason}}
//   {"op": "probing", "name"} before each module of a probe, then
//   {"op": "probed", "name", "ok", "error", "description", "parameters"}, and {"op": "probe_done"}
//     (for opencode files: "exports": [{"export", "tool", "description", "parameters", "problem", "error"}])
//   {"op": "result", "id", "ok": true, "output": "..."}  or  {"op": "result", "id", "ok": false, "error": "...", "reason": "..."}
// Modules may print: console output and process.stdout go to stderr, so stdout stays protocol.
// This file knows no tool: what to load, and the texts of the daemon's answers, come from it.

const protocolWrite = process.stdout.write.bind(process.stdout)
const toStderr = (...parts: unknown[]) => {
  process.stderr.write(parts.map((part) => (typeof part === 'string' ? part : Bun.inspect(part))).join(' ') + '\n')
}
console.log = console.info = console.debug = console.warn = console.error = toStderr
process.stdout.write = ((chunk: any, ...rest: any[]) => process.stderr.write(chunk, ...rest)) as any

type Tool = { description: string; parameters: Record<string, unknown>; execute: (args: any, context: any) => any }

const tools = new Map<string, Tool>()
const running = new Map<number, AbortController>()

function send(message: unknown) {
  protocolWrite(JSON.stringify(message) + '\n')
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

async function load(entries: { name: string; module: string }[]) {
  const loaded: Record<string, { description: string; parameters: unknown }> = {}
  const failed: Record<string, string> = {}
  tools.clear()
  for (const { name, module } of entries) {
    try {
      if (!(await Bun.file(module).exists())) throw new Error(`${module} does not exist`)
      const tool = (await import(module)).default
      const problem = problemOf(tool)
      if (problem) throw new Error(problem)
      tools.set(name, tool)
      loaded[name] = { description: String(tool.description ?? ''), parameters: tool.parameters }
    } catch (error) {
      failed[name] = error instanceof Error ? error.message : String(error)
    }
  }
  send({ op: 'loaded', tools: loaded, failed })
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
      send({ op: 'probed', name, ok: false, error: error instanceof Error ? error.message : String(error) })
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
      described.push({ export: name, tool: true, problem: 'args', error: error instanceof Error ? error.message : String(error) })
    }
  }
  return described
}

async function call(message: any) {
  const { id, tool: name, args, env, cwd, timeout_ms } = message
  const tool = tools.get(name)
  if (!tool) return send({ op: 'result', id, ok: false, reason: 'not_loaded', error: name })
  const controller = new AbortController()
  running.set(id, controller)
  const timer = setTimeout(() => controller.abort('timed_out'), timeout_ms)
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject({ aborted: controller.signal.reason }), { once: true })
  })
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => tool.execute(args ?? {}, { env: env ?? {}, signal: controller.signal, cwd })),
      aborted,
    ])
    const output = typeof result === 'string' ? result : result === undefined ? '' : JSON.stringify(result, null, 2)
    send({ op: 'result', id, ok: true, output })
  } catch (error: any) {
    if (error && typeof error === 'object' && 'aborted' in error) {
      send({ op: 'result', id, ok: false, reason: String(error.aborted), error: '' })
    } else {
      send({ op: 'result', id, ok: false, reason: 'thrown', error: error instanceof Error ? error.message : String(error) })
    }
  } finally {
    clearTimeout(timer)
    running.delete(id)
  }
}

let buffer = ''
const decoder = new TextDecoder()
for await (const chunk of Bun.stdin.stream()) {
  buffer += decoder.decode(chunk, { stream: true })
  let newline: number
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, newline)
    buffer = buffer.slice(newline + 1)
    if (!line.trim()) continue
    const message = JSON.parse(line)
    if (message.op === 'load') await load(message.tools)
    else if (message.op === 'probe') await probe(message.tools, message.opencode)
    else if (message.op === 'call') void call(message)
    else if (message.op === 'cancel') running.get(message.id)?.abort('cancelled')
  }
}
