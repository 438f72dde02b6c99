// todowrite — the experimental harness's tool: the session's todo list, as the model writes it.
// Arguments as opencode's `todowrite`: todos, each {content, status, priority}. The list is the
// conversation's (the model reads it back from its own call); the tool answers with it.

type Todo = { content: string; status: string; priority: string }

export default {
  description:
    'Write the todo list of the current task (the whole list each time): each item a content, ' +
    'a status (pending, in_progress, completed, cancelled) and a priority (high, medium, low).',
  parameters: {
    type: 'object',
    properties: {
      todos: {
        type: 'array',
        description: 'The updated todo list',
        items: {
          type: 'object',
          properties: {
            content: { type: 'string', description: 'Brief description of the task' },
            status: { type: 'string', description: 'Current status of the task: pending, in_progress, completed, cancelled' },
            priority: { type: 'string', description: 'Priority level of the task: high, medium, low' },
          },
          required: ['content', 'status', 'priority'],
        },
      },
    },
    required: ['todos'],
  },
  async execute(args: { todos: Todo[] }) {
    const open = args.todos.filter((t) => t.status !== 'completed' && t.status !== 'cancelled').length
    return `${open} todos\n${JSON.stringify(args.todos, null, 2)}`
  },
}
