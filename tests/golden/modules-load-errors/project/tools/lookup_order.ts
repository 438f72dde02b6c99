export default {
  description: 'Look up an order by id.',
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  async execute(args: { id: string }) {
    return `order ${args.id}: shipped`
  },
}
