export default {
  description: 'Never committed.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'ok' },
}
