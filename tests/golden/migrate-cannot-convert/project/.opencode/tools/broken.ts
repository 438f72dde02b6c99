import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "missing a brace",
  args: { a: tool.schema.string() ,
  async execute(args) { return args.a }
})
