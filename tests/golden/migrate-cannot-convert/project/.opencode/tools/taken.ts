import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "Declared already",
  args: {},
  async execute() { return "" },
})
