// task — the experimental harness's tool: a subagent, started with a prompt.
// Arguments as opencode's `task`: description, prompt, subagent_type.
//
// This module declares the tool; the daemon's turn loop runs it (the rules' DELEGATION_TOOL): the
// subagent's own turn, offered what both its list and the calling agent's list allow, and its
// final answer is this call's output.

export default {
  description:
    'Start a subagent to handle a multistep task on its own: give it a short description, the ' +
    'prompt it works on and the agent to run (subagent_type). Its final answer is returned.',
  parameters: {
    type: 'object',
    properties: {
      description: { type: 'string', description: 'A short (3-5 words) description of the task' },
      prompt: { type: 'string', description: 'The task for the agent to perform' },
      subagent_type: { type: 'string', description: 'The agent to run the task' },
    },
    required: ['description', 'prompt', 'subagent_type'],
  },
  async execute() {
    throw new Error('task runs in the turn loop of the experimental harness, not as a module')
  },
}
