export default {
  description: 'Remember things across sessions.',
  parameters: { type: 'object', properties: { command: { type: 'string' }, key: { type: 'string' } }, required: ['command'] },
  execute() { return 'ok' },
}
