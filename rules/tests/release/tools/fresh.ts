export default {
  description: 'A tool.',
  parameters: { type: 'object', properties: {} },
  async execute() {
    return 'ok'
  },
}
