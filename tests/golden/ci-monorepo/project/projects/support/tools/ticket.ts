export default { description: "Open a ticket.", parameters: { type: "object", properties: {} }, async execute() { return "ok" } }
