export default {
  description: 'Is done.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'ok' },
}
