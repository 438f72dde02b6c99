export default { description: "orders", parameters: {}, execute: async () => "ok" };
