import { tool } from "@opencode-ai/plugin"

const ping = tool({ description: "Ping", args: {}, async execute() { return "pong" } })

export { ping }
