import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "A date argument has no JSON Schema",
  args: { at: tool.schema.date() },
  async execute(args) { return String(args.at) },
})
