export default {
  description: 'A tool with nothing wrong.',
  parameters: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { q: { type: 'string', description: 'What to look for' } },
    required: ['q'],
    additionalProperties: false,
  },
  execute() { return 'ok' },
}
