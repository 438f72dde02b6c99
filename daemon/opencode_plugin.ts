// Written by `beeuni daemon` for the standard harness (opencode): registers the tools the
// daemon serves and forwards every call, with its abort signal, to the daemon; hides from each
// declared agent the tools it does not see. Do not edit;
// the daemon writes it again at each start. Every export is a plugin function.
//
// The daemon's URL and token come from whoever started opencode, on an inherited socket whose
// number is in BEEUNI_DAEMON_FD: read once, when this module is first evaluated in opencode's
// process, and closed, so that no process opencode starts afterwards (the model's commands) can
// read them. They live in this module's scope only; no file, variable or command line holds them.

import { closeSync, readFileSync } from 'node:fs'

const WITHOUT_CONNECTION = '__BEEUNI_WITHOUT_CONNECTION__'
// zod, bundled into one file of beeuni's own install that imports nothing (`plugin_zod.js`): by
// its absolute path, so that no folder this plugin lies in or above (TMPDIR's node_modules, say,
// which any user can make) can answer the import
const ZOD = '__BEEUNI_ZOD__'

type Connection = { url: string; token: string }

function handedOver(): Connection | string {
  const fd = Number(process.env.BEEUNI_DAEMON_FD)
  if (!Number.isInteger(fd) || fd < 3) return 'BEEUNI_DAEMON_FD names no inherited descriptor'
  try {
    const document = JSON.parse(readFileSync(fd, 'utf8'))
    if (typeof document.url !== 'string' || typeof document.token !== 'string') throw new Error('no url and token')
    return { url: document.url, token: document.token }
  } catch (error) {
    return `descriptor ${fd} held no connection (${error instanceof Error ? error.message : error})`
  } finally {
    try {
      closeSync(fd)
    } catch {}
  }
}

const connection = handedOver()
const post = fetch // as it is now: no plugin loaded later sees a call's token by wrapping fetch

// opencode's own server password: opencode read it at its start, and every command the model runs
// would inherit it with opencode's environment — and with it drive opencode as any agent. It goes
// from the environment, and opencode's process becomes non-dumpable, so that no process of the
// user without CAP_SYS_PTRACE reads its environment as it started (/proc/PID/environ) or its
// memory, where the daemon's token lives.
delete process.env.OPENCODE_SERVER_PASSWORD
try {
  const { dlopen, FFIType } = await import('bun:ffi')
  const { i32, u64 } = FFIType
  const libc = dlopen('libc.so.6', { prctl: { args: [i32, u64, u64, u64, u64], returns: i32 } })
  libc.symbols.prctl(4 /* PR_SET_DUMPABLE */, 0, 0, 0, 0)
  libc.close()
} catch {
  // no glibc here: Yama still keeps the model's commands out of opencode's memory
}

type Schema = { properties?: Record<string, object>; required?: string[] }

// A module's `parameters` as opencode's `args`, carried exactly. opencode turns a plugin tool's
// args into the JSON Schema its model gets with zod's toJSONSchema, which writes each schema's
// metadata (`.meta()`) into its output and adds nothing for z.any(): so each property is z.any()
// with its own JSON Schema as metadata, optional unless required. The required ones come first,
// in the module's order, so that opencode's `required` is the module's. (What this path cannot
// carry — a top-level keyword, a property's `id` — the daemon logs at load.) Without zod (beeuni's
// bundled copy is missing) opencode takes plain JSON Schema properties as they are, but marks every
// one required.
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
  if (typeof connection === 'string') {
    console.error(WITHOUT_CONNECTION.replace('{detail}', connection))
    return {}
  }
  const auth = { authorization: `Bearer ${connection.token}` }
  let z: any = null
  try {
    z = (await import(ZOD)).z
  } catch {}
  // without zod the schemas cannot be carried exactly: the daemon logs it once, with what to do
  const listing = `${connection.url}/beeuni/tools?all=true${z ? '' : '&without_zod=true'}`
  const listed = await (await post(listing, { headers: auth })).json()
  const tool: Record<string, unknown> = {}
  for (const served of listed.tools) {
    tool[served.name] = {
      description: served.description,
      args: argsOf(z, served.parameters),
      async execute(args: unknown, context: { agent?: string; abort?: AbortSignal }) {
        const response = await post(`${connection.url}/beeuni/tools/${served.name}`, {
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
