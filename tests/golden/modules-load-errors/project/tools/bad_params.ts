export default { description: 'x', parameters: { type: 'string' }, execute() {} }
