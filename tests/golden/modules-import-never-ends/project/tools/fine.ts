export default {
  description: 'Fine.',
  parameters: { type: 'object', properties: {} },
  execute() { return 'ok' },
}
