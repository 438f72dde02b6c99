// write — the experimental harness's tool: a file's whole content, written (its folders made).
// Arguments as opencode's `write`: content, filePath. A separate tool from `edit` on this harness.

import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type Context, resolvePath, shown } from './_files'

export default {
  description: 'Write a file of the working tree with the given content, replacing what it held.',
  parameters: {
    type: 'object',
    properties: {
      content: { type: 'string', description: 'The content to write to the file' },
      filePath: { type: 'string', description: 'The path of the file to write' },
    },
    required: ['content', 'filePath'],
  },
  async execute(args: { content: string; filePath: string }, context: Context) {
    const full = resolvePath(args.filePath, context, 'filePath')
    await mkdir(path.dirname(full), { recursive: true })
    await writeFile(full, args.content)
    return `Wrote ${shown(full, context)} (${Buffer.byteLength(args.content)} bytes)`
  },
}
