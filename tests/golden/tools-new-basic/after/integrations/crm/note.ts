// crm_note: a project tool. The daemon loads the default export: description, parameters (JSON
// Schema of the arguments) and execute(args, context). context.env holds the platform's
// variables and the calling agent's granted secrets; context.signal aborts a call that is
// cancelled or out of time. A returned object reaches the model as JSON, a thrown Error as
// its message.
export default {
  description: 'TODO: what crm_note does, and when the model should call it.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'TODO: what this argument is' },
    },
    required: ['query'],
  },
  async execute(args: { query: string }, context: { env: Record<string, string>; signal: AbortSignal }) {
    return { tool: 'crm_note', query: args.query }
  },
}
