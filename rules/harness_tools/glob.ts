// glob — the experimental harness's tool: the files whose paths match a glob pattern.
// Arguments as opencode's `glob`: pattern, path.

import { type Context, resolvePath, shown } from './_files'

const MAX_FILES = 100

export default {
  description: 'Find files of the working tree by a glob pattern such as "**/*.ts"; newest first.',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'The glob pattern to match files against' },
      path: { type: 'string', description: 'The folder to search in (default: the working tree)' },
    },
    required: ['pattern'],
  },
  async execute(args: { pattern: string; path?: string }, context: Context) {
    const folder = args.path ? resolvePath(args.path, context, 'path') : (context.cwd ?? process.cwd())
    const found: { name: string; time: number }[] = []
    for await (const name of new Bun.Glob(args.pattern).scan({ cwd: folder, absolute: true, onlyFiles: true, dot: false })) {
      if (name.includes('/node_modules/') || name.includes('/.git/')) continue
      found.push({ name, time: Bun.file(name).lastModified })
    }
    if (found.length === 0) return 'No files found'
    found.sort((a, b) => b.time - a.time || a.name.localeCompare(b.name))
    const shownFiles = found.slice(0, MAX_FILES).map((f) => shown(f.name, context))
    const more = found.length > MAX_FILES ? `\n\n(${found.length - MAX_FILES} more; narrow the pattern)` : ''
    return shownFiles.join('\n') + more
  },
}
