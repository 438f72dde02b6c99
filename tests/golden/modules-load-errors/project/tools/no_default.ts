export const tool = { description: 'x', parameters: { type: 'object' }, execute() {} }
