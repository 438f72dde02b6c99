// tools/lookup_order.ts — a project tool: the default export is a plain object.
export default {
  description: 'Look up an order by id. Returns its status and carrier.',
  parameters: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'The order id, e.g. "A-1042"' },
      include_items: { type: 'boolean', description: 'Also list the items' },
    },
    required: ['id'],
  },
  async execute(args: { id: string; include_items?: boolean }, context: { env: Record<string, string>; signal: AbortSignal }) {
    const base = context.env.ORDERS_API_URL ?? 'https://orders.example.com'
    const response = await fetch(`${base}/v1/orders/${encodeURIComponent(args.id)}`, {
      headers: { authorization: `Bearer ${context.env.ORDERS_API_KEY}` },
      signal: context.signal,
    })
    if (!response.ok) throw new Error(`orders API answered ${response.status}`)
    return await response.json()
  },
}
