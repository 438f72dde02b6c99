// Written by `beeuni daemon` for the standard harness (opencode): registers the tools the
// daemon serves and forwards every call, with its abort signal, to the daemon; hides from each
// declared agent the tools it does not see. Do not edit;
// the daemon writes it again at each start. Every export is a plugin function.

const CONNECTION_FILE = '__BEEUNI_CONNECTION_FILE__'

type Schema = { properties?: Record<string, object>; required?: string[] }

// A module's `parameters` as opencode's `args`, carried exactly. opencode turns a plugin tool's
// args into the JSON Schema its model gets with zod's toJSONSchema, which writes each schema's
// metadata (`.meta()`) into its output and adds nothing for z.any(): so each property is z.any()
// with its own JSON Schema as metadata, optional unless required. The required ones come first,
// in the module's order, so that opencode's `required` is the module's. (What this path cannot
// carry — a top-level keyword, a property's `id` — the daemon logs at load.) Without zod (the
// plugin package opencode installs into .opencode/ is missing) opencode takes plain JSON Schema
// properties as they are, but marks every one required.
function argsOf(z: any, parameters: Schema): Record<string, unknown> {
  const properties = parameters.properties ?? {}
  const required = (parameters.required ?? []).filter((name) => Object.hasOwn(properties, name))
  const args: Record<string, unknown> = {}
  for (const name of new Set([...required, ...Object.keys(properties)])) {
    const schema = properties[name]
    const carried = z ? z.any().meta(schema) : schema
    Object.defineProperty(args, name, {
      value: !z || required.includes(name) ? carried : carried.optional(),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return args
}

export const BeeuniTools = async () => {
  const { readFileSync } = await import('node:fs')
  const connection = JSON.parse(readFileSync(CONNECTION_FILE, 'utf8'))
  const auth = { authorization: `Bearer ${connection.token}` }
  let z: any = null
  try {
    z = (await import('@opencode-ai/plugin')).tool.schema
  } catch {
    z = null
  }
  // without zod the schemas cannot be carried exactly: the daemon logs it once, with what to do
  const listing = `${connection.url}/beeuni/tools?all=true${z ? '' : '&without_zod=true'}`
  const listed = await (await fetch(listing, { headers: auth })).json()
  const tool: Record<string, unknown> = {}
  for (const served of listed.tools) {
    tool[served.name] = {
      description: served.description,
      args: argsOf(z, served.parameters),
      async execute(args: unknown, context: { agent?: string; abort?: AbortSignal }) {
        const response = await fetch(`${connection.url}/beeuni/tools/${served.name}`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', ...(context.agent ? { 'x-beeuni-agent': context.agent } : {}) },
          body: JSON.stringify(args ?? {}),
          signal: context.abort,
        })
        const answer = await response.json()
        if (answer.error !== undefined) throw new Error(answer.error)
        return answer.output
      },
    }
  }
  // Each declared agent's model is offered only the tools it sees: opencode's per-agent permission
  // `deny` for the others, added to its configuration where the project set nothing for that tool
  // (the project's own setting always wins; the daemon still refuses the call, 403). The daemon
  // lists them as the manifest is now (it reloads a changed one first).
  const hidden: Record<string, string[]> = listed.hidden ?? {}
  async function config(settings: any) {
    settings.agent ??= {}
    for (const [agent, names] of Object.entries(hidden)) {
      const own = (settings.agent[agent] ??= {})
      if (own.permission === undefined) own.permission = {}
      if (own.permission === null || typeof own.permission !== 'object') continue
      for (const name of names) if (!(name in own.permission)) own.permission[name] = 'deny'
    }
  }
  return { tool, config }
}
