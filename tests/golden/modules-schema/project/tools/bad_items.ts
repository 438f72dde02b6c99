export default {
  description: 'Tag things.',
  parameters: { type: 'object', properties: { tags: { type: 'array', items: 'string' } } },
  execute() { return 'ok' },
}
