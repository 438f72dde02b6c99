/**
 * Deploy the current branch to an environment.
 */
import { z } from "zod"

const Environment = z.enum(["staging", "production"])

export default {
  description: "Deploy the current branch",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      environment: {
        description: "Where to deploy",
        default: "staging",
        type: "string",
        enum: ["staging", "production"],
      },
      dryRun: {
        description: "Only print what would happen",
        default: true,
        type: "boolean",
      },
      tag: {
        type: "string",
      },
    },
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
}
