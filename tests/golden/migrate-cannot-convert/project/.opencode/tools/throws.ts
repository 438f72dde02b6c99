import { tool } from "@opencode-ai/plugin"
import { missing } from "./nowhere"

export default tool({ description: "x", args: {}, async execute() { return missing } })
