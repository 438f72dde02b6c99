import { fetchJson } from "../.opencode/lib/github"

const API = "https://api.github.com"
const { GITHUB_TOKEN } = process.env


export default openCodeOutput({
  description: "Show one pull request",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      repo: {
        description: "owner/name of the repository",
        type: "string",
      },
      number: {
        description: "The pull request's number",
        type: "integer",
        minimum: -9007199254740991,
        maximum: 9007199254740991,
      },
    },
    required: ["repo", "number"],
  },
  async execute(args, ctx) {
    const found = await fetchJson(ctx, `${API}/repos/${args.repo}/pulls/${args.number}`, Bun.env.GITHUB_TOKEN)
    return { title: `PR #${args.number}`, output: `${found.title} (${found.state}) [call ${ctx.callID}]`, metadata: { url: found.html_url } }
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
