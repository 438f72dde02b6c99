export default {
  description: "Multiply two numbers",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      a: {
        description: "First number",
        type: "number",
      },
      b: {
        description: "Second number",
        type: "number",
      },
    },
    required: ["a", "b"],
  },
  async execute(args) {
    return args.a * args.b
  },
}
