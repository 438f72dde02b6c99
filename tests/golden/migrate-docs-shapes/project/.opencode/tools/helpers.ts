import { tool } from "@opencode-ai/plugin"

export const TIMEOUT_MS = 5000

export default tool({
  description: "Ping a host",
  args: { host: tool.schema.string() },
  async execute(args) {
    return `pong from ${args.host} within ${TIMEOUT_MS} ms`
  },
})
