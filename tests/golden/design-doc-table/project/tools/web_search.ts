export default { description: "search", parameters: { type: "object", properties: {} }, async execute() { return [] } }
