import { lookupUrl } from "../.opencode/lib/orders"

// Zod imported directly, a plain object (opencode docs, "Arguments")
export default {
  description: "Look up an order by its number",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      order: {
        description: "The order number",
        type: "string",
        pattern: "^[0-9]+$",
      },
      verbose: {
        type: "boolean",
      },
    },
    required: ["order"],
  },
  async execute(args: { order: string; verbose?: boolean }, { abort }: { abort: AbortSignal }) {
    const key = process.env.ORDERS_API_KEY
    const base = process.env["BEEUNI_API_URL"]
    return `${lookupUrl(args.order)} (${key ? "key" : "no key"}, ${base ?? "no base"}, ${abort ? "abortable" : ""})`
  },
}
