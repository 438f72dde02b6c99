import { tool } from "@opencode-ai/plugin"

while (true) {} // never finishes loading

export default tool({ description: "never", args: {}, async execute() { return "" } })
