export default {
  description: 'Staged after the release.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'ok' },
}
