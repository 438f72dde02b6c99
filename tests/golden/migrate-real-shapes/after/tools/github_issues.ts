import { fetchJson } from "../.opencode/lib/github"

const API = "https://api.github.com"
const { GITHUB_TOKEN } = process.env

export default openCodeOutput({
  description: "List a repository's issues",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      repo: {
        description: "owner/name of the repository",
        type: "string",
      },
      state: {
        description: "Which issues",
        default: "open",
        type: "string",
        enum: ["open", "closed", "all"],
      },
      limit: {
        description: "At most this many",
        default: 20,
        type: "integer",
        minimum: 1,
        maximum: 100,
      },
    },
    required: ["repo"],
  },
  async execute(args, ctx) {
    const found = await fetchJson(ctx, `${API}/repos/${args.repo}/issues?state=${args.state}&per_page=${args.limit}`, GITHUB_TOKEN)
    return found.map((issue: { number: number; title: string }) => `#${issue.number} ${issue.title}`).join("\n")
  },
})

// opencode showed the model the `output` of a `{ output, metadata }` result (beeuni tools migrate)
function openCodeOutput<T extends { execute: (...args: any[]) => unknown }>(served: T): T {
  return {
    ...served,
    async execute(...args: any[]) {
      const result: any = await served.execute(...args)
      return result !== null && typeof result === 'object' && typeof result.output === 'string' ? result.output : result
    },
  }
}
