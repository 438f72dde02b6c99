/**
 * Deploy the current branch to an environment.
 */
import { tool, type ToolContext } from "@opencode-ai/plugin"
import { z } from "zod"

const Environment = z.enum(["staging", "production"])

export default tool({
  description: "Deploy the current branch",
  args: {
    environment: tool.schema.enum(["staging", "production"]).default("staging").describe("Where to deploy"),
    dryRun: tool.schema.boolean().default(true).describe("Only print what would happen"),
    tag: tool.schema.string().optional(),
  },
  async execute(args, { abort, ...rest }: ToolContext) {
    const environment = Environment.parse(args.environment)
    const env = globalThis.process.env
    const proc = Bun.spawn(["./scripts/deploy.sh", environment, args.dryRun ? "--dry-run" : ""], {
      env: { ...process.env, DEPLOY_TOKEN: env.DEPLOY_TOKEN },
      signal: abort,
    })
    await proc.exited
    return `deployed to ${environment} for ${rest.agent}`
  },
})
