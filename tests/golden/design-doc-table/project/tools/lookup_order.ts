export default { description: "orders", parameters: { type: "object", properties: {} }, async execute() { return {} } }
