import { tool } from "@opencode-ai/plugin"

// Validates a document against a schema built at run time: it needs zod from the plugin itself
export default tool({
  description: "Check that a JSON document has the given keys",
  args: {
    document: tool.schema.string().describe("The JSON text"),
    keys: tool.schema.array(tool.schema.string()).describe("Keys it must have"),
  },
  async execute(args) {
    const shape = Object.fromEntries(args.keys.map((key) => [key, tool.schema.unknown()]))
    const checked = tool.schema.object(shape).safeParse(JSON.parse(args.document))
    return checked.success ? "ok" : checked.error.message
  },
})
