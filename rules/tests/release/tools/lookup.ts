// ok: release/package-not-in-release
import fs from 'node:fs'
// ok: release/package-not-in-release
import { serve } from 'bun'
// expect: release/import-not-tracked resolves to `tools/helper.ts`, which is not tracked by git
import { helper } from './helper'
// expect: release/import-missing names no file
import { gone } from './gone.js'
// ok: release/import-not-tracked
// ok: release/import-missing
import { shared } from './shared.js'

export default {
  description: 'Look up an order by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  async execute(args: { id: string }) {
    return `${helper()} ${shared} ${gone} ${fs.existsSync(args.id)} ${typeof serve}`
  },
}
