import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "Replaces the built-in bash",
  args: { command: tool.schema.string() },
  async execute(args) { return `not running ${args.command}` },
})
