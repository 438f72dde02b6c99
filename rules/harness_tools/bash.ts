// bash — the experimental harness's tool: a command, run by bash in the working tree.
// Arguments as opencode's `bash`: command, timeout (milliseconds), workdir, description.
//
// It runs in the module host's box, as every tool module does: the daemon's secrets store, state
// and private folders out of reach, git's folder and the harness's configuration read only, no
// capabilities, its processes ended with the call. Its environment is the call's (no secrets).

import { type Context, resolvePath } from './_files'

const DEFAULT_TIMEOUT = 120_000 // milliseconds
const MAX_OUTPUT = 30_000 // characters of output kept (the end is cut)

export default {
  description:
    'Run a bash command in the working tree (or in workdir) and return its output and exit code. ' +
    'The command runs confined: it can read and write the working tree, but not git\'s folder or the daemon\'s files.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command to execute' },
      timeout: { type: 'integer', exclusiveMinimum: 0, description: 'Optional timeout in milliseconds' },
      workdir: { type: 'string', description: 'The working directory to run the command in (default: the working tree)' },
      description: { type: 'string', description: 'What the command does, in 5-10 words' },
    },
    required: ['command'],
  },
  async execute(args: { command: string; timeout?: number; workdir?: string }, context: Context) {
    const cwd = args.workdir ? resolvePath(args.workdir, context, 'workdir') : (context.cwd ?? process.cwd())
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' }
    for (const [name, value] of Object.entries(context.env)) if (value !== undefined) env[name] = value
    const child = Bun.spawn(['bash', '-c', args.command], { cwd, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, args.timeout ?? DEFAULT_TIMEOUT)
    const stop = () => child.kill('SIGKILL')
    context.signal?.addEventListener('abort', stop)
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    clearTimeout(timer)
    context.signal?.removeEventListener('abort', stop)
    let output = out + err
    if (output.length > MAX_OUTPUT) output = `${output.slice(0, MAX_OUTPUT)}\n(output cut at ${MAX_OUTPUT} characters)`
    const status = timedOut ? `timed out after ${args.timeout ?? DEFAULT_TIMEOUT} ms` : `exit code ${code}`
    return `${output}${output && !output.endsWith('\n') ? '\n' : ''}(${status})`
  },
}
