// One module's load report, in a ShadowRealm of its own (probe_host.ts makes one per module of a probe of
// several — beeuni's own — and imports this file in it; a module alone in its process is imported
// beside the host, which it can then bend for its own report only). The module's code runs in that
// realm only: what it patches (JSON.stringify, Object.prototype, Array.prototype, a global, a
// node: module, Bun) is the realm's, and its report reaches the host as a string — the one kind of
// value, with functions, that crosses realms — which the host's own realm, where no module runs,
// parses, checks and serialises.
//
// describe(module, opencode, done) calls done once with the report's JSON:
//   {ok: true, description, parameters}      the default export's (parameters as JSON carries them)
//   {ok: true, exports: [...]}               for an opencode custom tool file (`beeuni tools migrate`,
//                                            `opencode` the JSON of {zod: [...]}): every export,
//                                            {export, tool, description, parameters, problem, error}
//   {ok: false, error}                       the import threw, or the export has the wrong shape
// This file knows no tool: what to load comes with the call.

const MAX_ERROR = 64 * 1024 // characters of a thrown message that are sent

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR)
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
      const parameters = JSON.parse(JSON.stringify(z.toJSONSchema(z.object(definition.args), { io: 'input' })))
      described.push({ export: name, tool: true, description: String(definition.description ?? ''), parameters })
    } catch (error) {
      described.push({ export: name, tool: true, problem: 'args', error: messageOf(error) })
    }
  }
  return described
}

async function report(request: { module: string; opencode: { zod: ZodSource[] } | null }): Promise<unknown> {
  const { module, opencode } = request
  try {
    if (!(await Bun.file(module).exists())) throw new Error(`${module} does not exist`)
    const loaded = await import(module)
    if (opencode) return { ok: true, exports: await describeExports(loaded, module, opencode.zod) }
    const tool = loaded.default
    const problem = problemOf(tool)
    if (problem) throw new Error(problem)
    const parameters = JSON.parse(JSON.stringify(tool.parameters))
    return { ok: true, description: String(tool.description ?? ''), parameters }
  } catch (error) {
    return { ok: false, error: messageOf(error) }
  }
}

export function describe(module: string, opencode: string, done: (report: string) => void): void {
  report({ module, opencode: opencode ? JSON.parse(opencode) : null }).then((found) => {
    let text: string
    try {
      text = JSON.stringify(found)
    } catch (error) {
      text = JSON.stringify({ ok: false, error: messageOf(error) }) // what JSON cannot carry
    }
    done(text)
  })
}
