// read — the experimental harness's tool: a file's lines, numbered, or a folder's entries.
// Arguments as opencode's `read`: filePath, offset (1-based line), limit (lines, default 2000).

import { readdir, readFile, stat } from 'node:fs/promises'
import { type Context, resolvePath, shown } from './_files'

const DEFAULT_LIMIT = 2000
const MAX_LINE = 2000 // characters of one line shown

export default {
  description:
    'Read a file (its lines, numbered) or a folder (its entries) of the working tree. ' +
    'Use offset and limit to read a long file in parts.',
  parameters: {
    type: 'object',
    properties: {
      filePath: { type: 'string', description: 'The path of the file or folder to read' },
      offset: { type: 'integer', minimum: 0, description: 'The line number to start reading from (1-indexed)' },
      limit: { type: 'integer', minimum: 0, description: 'The maximum number of lines to read (defaults to 2000)' },
    },
    required: ['filePath'],
  },
  async execute(args: { filePath: string; offset?: number; limit?: number }, context: Context) {
    const full = resolvePath(args.filePath, context, 'filePath')
    const info = await stat(full)
    if (info.isDirectory()) {
      const entries = await readdir(full, { withFileTypes: true })
      return entries
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort()
        .join('\n')
    }
    const lines = (await readFile(full, 'utf8')).split('\n')
    const start = Math.max(1, args.offset ?? 1)
    const limit = args.limit ?? DEFAULT_LIMIT
    const chosen = lines.slice(start - 1, start - 1 + limit)
    const body = chosen.map((line, i) => `${String(start + i).padStart(5)}| ${line.slice(0, MAX_LINE)}`).join('\n')
    const rest = lines.length - (start - 1 + chosen.length)
    return rest > 0 ? `${body}\n\n(${shown(full, context)}: ${rest} more lines; read on with offset ${start + chosen.length})` : body
  },
}
