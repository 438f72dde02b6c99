// Run one tool module once, the way a harness would call it, and print the outcome as JSON.
//   bun tests/bun/run_tool.ts MODULE ARGS_JSON CONTEXT_JSON
// Prints {"ok": true, "result": ...} or {"ok": false, "error": "message"}.
import path from 'node:path'

const [modulePath, argsJson, contextJson] = process.argv.slice(2)
const tool = (await import(path.resolve(modulePath))).default
const context = { ...JSON.parse(contextJson ?? '{}'), signal: AbortSignal.timeout(20_000) }
try {
  const result = await tool.execute(JSON.parse(argsJson ?? '{}'), context)
  console.log(JSON.stringify({ ok: true, result }))
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) }))
}
