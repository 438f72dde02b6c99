export default {
  description: 'Show a file or a link to the user.',
  parameters: {
    type: 'object',
    properties: { type: { type: 'string', enum: ['file', 'link'] }, path: { type: 'string' }, content: { type: 'string' } },
    required: ['type'],
  },
  execute() { return 'shown' },
}
