export default {
  description: "Get project information",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {},
  },
  async execute(args, context) {
    // Access context information
    const { agent, sessionID, messageID, directory, worktree } = context
    return `Agent: ${agent}, Session: ${sessionID}, Message: ${messageID}, Directory: ${directory}, Worktree: ${worktree}`
  },
}
