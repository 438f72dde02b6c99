// expect: release/package-not-in-release bun -e "import tool from './tools/zodded.ts'; console.log(JSON.stringify(tool.parameters, null, 2))"
import { z } from 'zod'

export default {
  description: 'Look up an order by id.',
  parameters: z.toJSONSchema(z.object({ id: z.string() })),
  async execute(args: { id: string }) {
    return `order ${args.id}`
  },
}
