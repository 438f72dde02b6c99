// edit — the experimental harness's tool: an exact string replaced in a file.
// Arguments as opencode's `edit`: filePath, oldString, newString, replaceAll.

import { readFile, writeFile } from 'node:fs/promises'
import { type Context, resolvePath, shown } from './_files'

export default {
  description:
    'Replace an exact string in a file of the working tree. oldString must occur exactly once, ' +
    'unless replaceAll is true.',
  parameters: {
    type: 'object',
    properties: {
      filePath: { type: 'string', description: 'The path of the file to modify' },
      oldString: { type: 'string', description: 'The text to replace' },
      newString: { type: 'string', description: 'The text to replace it with (must be different from oldString)' },
      replaceAll: { type: 'boolean', description: 'Replace all occurrences of oldString (default false)' },
    },
    required: ['filePath', 'oldString', 'newString'],
  },
  async execute(args: { filePath: string; oldString: string; newString: string; replaceAll?: boolean }, context: Context) {
    const full = resolvePath(args.filePath, context, 'filePath')
    if (args.oldString === args.newString) throw new Error('oldString and newString are the same: nothing to change')
    const text = await readFile(full, 'utf8')
    const count = text.split(args.oldString).length - 1
    if (count === 0) throw new Error(`oldString was not found in ${shown(full, context)}`)
    if (count > 1 && !args.replaceAll)
      throw new Error(`oldString occurs ${count} times in ${shown(full, context)}: give more context, or set replaceAll`)
    const changed = args.replaceAll ? text.split(args.oldString).join(args.newString) : text.replace(args.oldString, () => args.newString)
    await writeFile(full, changed)
    return `Edited ${shown(full, context)} (${args.replaceAll ? count : 1} replacement${count > 1 && args.replaceAll ? 's' : ''})`
  },
}
