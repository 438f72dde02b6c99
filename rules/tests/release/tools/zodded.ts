// expect: release/package-not-in-release console.log(JSON.stringify(z.toJSONSchema(z.object({ id: z.string() })), null, 2))
import { z } from 'zod'

export default {
  description: 'Look up an order by id.',
  parameters: z.toJSONSchema(z.object({ id: z.string() })),
  async execute(args: { id: string }) {
    return `order ${args.id}`
  },
}
