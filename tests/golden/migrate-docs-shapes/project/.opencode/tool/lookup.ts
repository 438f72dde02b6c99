import { z } from "zod"
import { lookupUrl } from "../lib/orders"

// Zod imported directly, a plain object (opencode docs, "Arguments")
export default {
  description: "Look up an order by its number",
  args: {
    order: z.string().regex(/^[0-9]+$/).describe("The order number"),
    verbose: z.boolean().optional(),
  },
  async execute(args: { order: string; verbose?: boolean }, { abort }: { abort: AbortSignal }) {
    const key = process.env.ORDERS_API_KEY
    const base = process.env["BEEUNI_API_URL"]
    return `${lookupUrl(args.order)} (${key ? "key" : "no key"}, ${base ?? "no base"}, ${abort ? "abortable" : ""})`
  },
}
