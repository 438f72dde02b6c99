// grep — the experimental harness's tool: the lines of files that match a regular expression.
// Arguments as opencode's `grep`: pattern, path, include (a glob of file names).

import { readFile } from 'node:fs/promises'
import { type Context, resolvePath, shown } from './_files'

const MAX_MATCHES = 100
const MAX_FILE = 4 * 1024 * 1024 // bytes of a file searched

export default {
  description: 'Search the contents of the working tree\'s files with a regular expression; file, line number and line of each match.',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'The regex pattern to search for in file contents' },
      path: { type: 'string', description: 'The folder to search in (default: the working tree)' },
      include: { type: 'string', description: 'File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}")' },
    },
    required: ['pattern'],
  },
  async execute(args: { pattern: string; path?: string; include?: string }, context: Context) {
    let expression: RegExp
    try {
      expression = new RegExp(args.pattern)
    } catch (error) {
      throw new Error(`\`pattern\` is no regular expression: ${error instanceof Error ? error.message : error}`)
    }
    const folder = args.path ? resolvePath(args.path, context, 'path') : (context.cwd ?? process.cwd())
    const include = args.include ? `**/${args.include}` : '**/*'
    const matches: string[] = []
    let more = 0
    const names: string[] = []
    for await (const name of new Bun.Glob(include).scan({ cwd: folder, absolute: true, onlyFiles: true })) {
      if (!name.includes('/node_modules/') && !name.includes('/.git/')) names.push(name)
    }
    names.sort()
    for (const name of names) {
      if (Bun.file(name).size > MAX_FILE) continue
      let text: string
      try {
        text = await readFile(name, 'utf8')
      } catch {
        continue // unreadable (the box keeps some files out): not searched
      }
      if (text.includes('\u0000')) continue // binary
      text.split('\n').forEach((line, i) => {
        if (!expression.test(line)) return
        if (matches.length < MAX_MATCHES) matches.push(`${shown(name, context)}:${i + 1}: ${line.slice(0, 2000)}`)
        else more++
      })
    }
    if (matches.length === 0) return 'No files found'
    return matches.join('\n') + (more ? `\n\n(${more} more matches; narrow the pattern or the path)` : '')
  },
}
