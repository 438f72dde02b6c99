export default {
  description: "Look up an order",
  parameters: { type: "object", properties: {} },
  async execute() {
    return "no orders";
  },
};
