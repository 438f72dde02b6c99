import { tool } from "@opencode-ai/plugin"
import path from "node:path"
import { load, save } from "../lib/store"

// Our own memory: key/value notes for the agent, never committed
export default tool({
  description: "Remember or recall a note by key",
  args: {
    action: tool.schema.enum(["get", "set", "list"]).describe("What to do"),
    key: tool.schema.string().optional().describe("The note's key"),
    value: tool.schema.string().optional(),
  },
  async execute(args, context) {
    const file = path.join(globalThis.process.env.MEMORY_DIR ?? context.worktree, "notes.json")
    const notes = await load(file)
    if (args.action === "set" && args.key) {
      notes[args.key] = args.value ?? ""
      await save(file, notes)
    }
    const shown = args.action === "list" ? Object.keys(notes).join("\n") : notes[args.key ?? ""] ?? "(none)"
    return { output: shown, metadata: { count: Object.keys(notes).length } }
  },
})
