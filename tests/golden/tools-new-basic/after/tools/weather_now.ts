// weather_now: a project tool. The daemon loads the default export: description, parameters (JSON
// Schema of the arguments) and execute(args, context). context.env holds the platform's
// variables and the calling agent's granted secrets. context.signal aborts when the call runs
// past the daemon's --timeout or its caller goes away: pass it to fetch and to what you start;
// the call then has 2 seconds to finish before its Worker and processes are ended. A returned
// object reaches the model as JSON, a thrown Error as its message.
export default {
  description: 'TODO: what weather_now does, and when the model should call it.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'TODO: what this argument is' },
    },
    required: ['query'],
  },
  async execute(args: { query: string }, context: { env: Record<string, string>; signal: AbortSignal }) {
    return { tool: 'weather_now', query: args.query }
  },
}
