export default {
  description: 'Look up an order by id.',
  parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['orderid', 'order_id'] },
  execute() { return 'ok' },
}
