export default {
  description: 'Take a note.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  async execute(args: { text: string }) {
    return `noted: ${args.text}`
  },
}
