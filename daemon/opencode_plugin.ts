// Written by `beeuni daemon` for the standard harness (opencode): registers the tools the
// daemon serves and forwards every call, with its abort signal, to the daemon; hides from each
// declared agent the tools it does not see. Do not edit;
// the daemon writes it again at each start. Every export is a plugin function.

const CONNECTION_FILE = '__BEEUNI_CONNECTION_FILE__'

type Schema = { type?: string; description?: string; enum?: unknown[]; items?: Schema; properties?: Record<string, Schema>; required?: string[] }

// JSON Schema → zod (opencode's `tool.schema`), for the common shapes; anything else is z.any().
function toZod(z: any, schema: Schema): any {
  let result: any
  if (schema.enum && schema.enum.every((value) => typeof value === 'string')) result = z.enum(schema.enum)
  else if (schema.type === 'string') result = z.string()
  else if (schema.type === 'number') result = z.number()
  else if (schema.type === 'integer') result = z.number().int()
  else if (schema.type === 'boolean') result = z.boolean()
  else if (schema.type === 'array') result = z.array(schema.items ? toZod(z, schema.items) : z.any())
  else if (schema.type === 'object') result = z.object(shapeOf(z, schema)).passthrough()
  else result = z.any()
  return schema.description ? result.describe(schema.description) : result
}

function shapeOf(z: any, schema: Schema): Record<string, any> {
  const shape: Record<string, any> = {}
  const required = new Set(schema.required ?? [])
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    shape[name] = required.has(name) ? toZod(z, property) : toZod(z, property).optional()
  }
  return shape
}

export const BeeuniTools = async () => {
  const { readFileSync } = await import('node:fs')
  const connection = JSON.parse(readFileSync(CONNECTION_FILE, 'utf8'))
  const auth = { authorization: `Bearer ${connection.token}` }
  const listed = await (await fetch(`${connection.url}/beeuni/tools?all=true`, { headers: auth })).json()
  let z: any = null
  try {
    z = (await import('@opencode-ai/plugin')).tool.schema
  } catch {
    z = null // without zod the tools still work; the model then sees no parameter list
  }
  const tool: Record<string, unknown> = {}
  for (const served of listed.tools) {
    tool[served.name] = {
      description: served.description,
      args: z ? shapeOf(z, served.parameters) : {},
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
