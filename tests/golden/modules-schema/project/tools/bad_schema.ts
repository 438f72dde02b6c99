export default {
  description: 'Count things.',
  parameters: { type: 'object', properties: { count: { type: 'integr' } } },
  execute() { return 'ok' },
}
