// Written by `beeuni daemon` for the standard harness (opencode): registers the tools the
// daemon serves and forwards every call, with its abort signal, to the daemon; gives each
// declared agent its permission and hides from it the tools it does not see. Do not edit;
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

// One rule of an agent's permission, as the daemon lists it; opencode's configuration writes the
// rules of one permission as its action (`*` alone) or as patterns mapped to actions, in order.
type Rule = { permission: string; pattern: string; action: string }
type Setting = string | Record<string, string>

function asConfig(rules: Rule[]): Record<string, Setting> {
  const config: Record<string, Setting> = {}
  for (const { permission, pattern, action } of rules) {
    const before = config[permission]
    if (pattern === '*' && before === undefined) config[permission] = action
    else {
      const patterns = patternsOf(before)
      last(patterns, pattern, action)
      config[permission] = patterns
    }
  }
  return config
}

function patternsOf(setting: unknown): Record<string, string> {
  if (typeof setting === 'string') return { '*': setting }
  return setting !== null && typeof setting === 'object' && !Array.isArray(setting) ? { ...(setting as Record<string, string>) } : {}
}

// `key` set to `value` as the last entry of `entries`: opencode reads them in order
function last(entries: Record<string, unknown>, key: string, value: unknown) {
  delete entries[key]
  entries[key] = value
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
      async execute(args: unknown, context: { agent?: string; abort?: AbortSignal; ask?: (input: object) => Promise<void> }) {
        // the agent's permission for this tool (`allow`, `ask`: the user is asked, `deny`: refused)
        if (typeof context.ask === 'function') await context.ask({ permission: served.name, patterns: ['*'], always: ['*'], metadata: {} })
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
  // Each declared agent's settings of the manifest, given to opencode as that agent's
  // configuration (this hook runs once opencode has read the project's own): first its
  // `permission`, each key after (so over) what the project's configuration says of it; then
  // `deny` for every tool it does not see, last of all — opencode's last matching rule decides,
  // so nothing the project's configuration says (`permission: {edit: allow}`, `"*": "allow"`,
  // `tools: {bash: true}`) shows it again: the hide is the last word (and the daemon refuses the
  // call, 403). The daemon lists them as the manifest is now (it reloads a changed one first).
  const hidden: Record<string, string[]> = listed.hidden ?? {}
  const permission: Record<string, Rule[]> = listed.permission ?? {}
  async function config(settings: any) {
    settings.agent ??= {}
    for (const agent of new Set([...Object.keys(permission), ...Object.keys(hidden)])) {
      const own = (settings.agent[agent] ??= {})
      let rules = own.permission
      if (typeof rules === 'string') rules = { '*': rules }
      if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) rules = {}
      own.permission = rules
      for (const [key, value] of Object.entries(asConfig(permission[agent] ?? []))) {
        if (typeof value === 'string') last(rules, key, value)
        else {
          const patterns = patternsOf(rules[key])
          for (const [pattern, action] of Object.entries(value)) last(patterns, pattern, action)
          last(rules, key, patterns)
        }
      }
      const tools = own.tools !== null && typeof own.tools === 'object' ? own.tools : {}
      for (const name of hidden[agent] ?? []) {
        delete tools[name]
        last(rules, name, 'deny')
      }
    }
  }
  return { tool, config }
}
