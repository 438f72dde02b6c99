export default {
  description: "Query the project database",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      query: {
        description: "SQL query to execute",
        type: "string",
      },
    },
    required: ["query"],
  },
  async execute(args) {
    // Your database logic here
    return `Executed query: ${args.query}`
  },
}
