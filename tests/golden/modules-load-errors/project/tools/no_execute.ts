export default { description: 'x', parameters: { type: 'object', properties: {} } }
