// memory — a Beeuni tool: the project's notes, as files under `memory/` in the repository.
//
// Commands: view, create, str_replace, insert, delete, rename. The web UI reads the call's
// arguments `command` and `path`; keep them if you change this copy. A path that leaves
// `memory/` is refused.
//
// Imports only node:* modules. The folder is `memory/` under context.cwd (the repository root;
// the daemon sets it), or under the working directory.

import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'

type Context = { env: Record<string, string | undefined>; signal?: AbortSignal; cwd?: string }
type Args = {
  command?: string
  path?: string
  file_text?: string
  old_str?: string
  new_str?: string
  insert_line?: number
  insert_text?: string
  new_path?: string
}

const FOLDER = 'memory'
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename']

/** The absolute path of a note, refusing anything outside memory/. */
function resolveNote(root: string, given: string | undefined): { full: string; shown: string } {
  const raw = String(given ?? '').trim()
  if (!raw) throw new Error('memory: `path` is empty: name a file or folder under memory/, e.g. memory/notes.md')
  const relative = raw.replace(/^\/+/, '')
  const inside = relative === FOLDER || relative.startsWith(`${FOLDER}/`) ? relative : path.join(FOLDER, relative)
  const base = path.resolve(root, FOLDER)
  const full = path.resolve(root, inside)
  if (full !== base && !full.startsWith(base + path.sep)) throw new Error(`memory: ${raw} leaves memory/`)
  return { full, shown: path.relative(root, full) || FOLDER }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false)
}

async function view(full: string, shown: string): Promise<string> {
  const info = await stat(full).catch(() => null)
  if (!info) throw new Error(`memory: ${shown} does not exist`)
  if (info.isDirectory()) {
    const entries = await readdir(full, { withFileTypes: true })
    const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort()
    return names.length ? `${shown}/\n${names.map((name) => `  ${name}`).join('\n')}` : `${shown}/ is empty`
  }
  const text = await readFile(full, 'utf8')
  return text
    .split('\n')
    .map((line, index) => `${String(index + 1).padStart(6)}\t${line}`)
    .join('\n')
}

export default {
  description:
    'Keep notes across sessions as files under memory/: view a file or folder, create a file, replace text, insert lines, delete, rename.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', enum: COMMANDS, description: 'What to do' },
      path: { type: 'string', description: 'A file or folder under memory/, e.g. memory/notes.md' },
      file_text: { type: 'string', description: 'create: the whole content' },
      old_str: { type: 'string', description: 'str_replace: the exact text to replace (once in the file)' },
      new_str: { type: 'string', description: 'str_replace: the replacement' },
      insert_line: { type: 'integer', description: 'insert: the line after which to insert (0 = at the top)' },
      insert_text: { type: 'string', description: 'insert: the text to insert' },
      new_path: { type: 'string', description: 'rename: the new path under memory/' },
    },
    required: ['command', 'path'],
  },
  async execute(args: Args, context: Context) {
    const root = context.cwd ?? process.cwd()
    const { full, shown } = resolveNote(root, args.path)
    switch (args.command) {
      case 'view':
        return await view(full, shown)
      case 'create': {
        if (typeof args.file_text !== 'string') throw new Error('memory: create needs `file_text`, the content')
        await mkdir(path.dirname(full), { recursive: true })
        await writeFile(full, args.file_text)
        return `created ${shown}`
      }
      case 'str_replace': {
        if (typeof args.old_str !== 'string' || !args.old_str) throw new Error('memory: str_replace needs `old_str`')
        if (!(await exists(full))) throw new Error(`memory: ${shown} does not exist`)
        const text = await readFile(full, 'utf8')
        const count = text.split(args.old_str).length - 1
        if (count !== 1)
          throw new Error(`memory: \`old_str\` occurs ${count} times in ${shown}; it must occur exactly once`)
        await writeFile(full, text.replace(args.old_str, () => args.new_str ?? ''))
        return `replaced text in ${shown}`
      }
      case 'insert': {
        const text = await readFile(full, 'utf8').catch(() => {
          throw new Error(`memory: ${shown} does not exist`)
        })
        const lines = text.split('\n')
        const at = Math.trunc(Number(args.insert_line ?? 0))
        if (!(at >= 0 && at <= lines.length))
          throw new Error(`memory: insert_line ${args.insert_line} is outside ${shown} (0 to ${lines.length})`)
        lines.splice(at, 0, String(args.insert_text ?? args.new_str ?? ''))
        await writeFile(full, lines.join('\n'))
        return `inserted at line ${at} of ${shown}`
      }
      case 'delete': {
        if (!(await exists(full))) throw new Error(`memory: ${shown} does not exist`)
        await rm(full, { recursive: true })
        return `deleted ${shown}`
      }
      case 'rename': {
        const target = resolveNote(root, args.new_path)
        if (!(await exists(full))) throw new Error(`memory: ${shown} does not exist`)
        if (await exists(target.full)) throw new Error(`memory: ${target.shown} exists already`)
        await mkdir(path.dirname(target.full), { recursive: true })
        await rename(full, target.full)
        return `renamed ${shown} to ${target.shown}`
      }
      default:
        throw new Error(`memory: unknown command \`${args.command}\`; commands: ${COMMANDS.join(', ')}`)
    }
  },
}
