import { z } from 'zod'
export default {
  description: 'Look up an order by id.',
  parameters: z.toJSONSchema(z.object({ id: z.string().describe('The order id') })),
  async execute(args) { return `order ${args.id}` },
}
