export default {
  description: '   ',
  parameters: { type: 'object', properties: {} },
  execute() { return 'ok' },
}
