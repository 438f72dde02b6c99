export default {
  parameters: { type: 'object', properties: {} },
  execute() { return 'ok' },
}
