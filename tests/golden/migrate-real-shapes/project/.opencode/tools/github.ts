import { tool } from "@opencode-ai/plugin"
import { fetchJson } from "../lib/github"

const z = tool.schema
const repo = z.string().describe("owner/name of the repository")
const state = z.enum(["open", "closed", "all"]).default("open").describe("Which issues")

const API = "https://api.github.com"
const { GITHUB_TOKEN } = process.env

export const issues = tool({
  description: "List a repository's issues",
  args: {
    repo,
    state,
    limit: z.number().int().min(1).max(100).default(20).describe("At most this many"),
  },
  async execute(args, ctx) {
    const found = await fetchJson(ctx, `${API}/repos/${args.repo}/issues?state=${args.state}&per_page=${args.limit}`, GITHUB_TOKEN)
    return found.map((issue: { number: number; title: string }) => `#${issue.number} ${issue.title}`).join("\n")
  },
})

export const pull = tool({
  description: "Show one pull request",
  args: {
    repo,
    number: z.number().int().describe("The pull request's number"),
  },
  async execute(args, ctx) {
    const found = await fetchJson(ctx, `${API}/repos/${args.repo}/pulls/${args.number}`, Bun.env.GITHUB_TOKEN)
    return { title: `PR #${args.number}`, output: `${found.title} (${found.state}) [call ${ctx.callID}]`, metadata: { url: found.html_url } }
  },
})
