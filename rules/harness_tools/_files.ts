// Shared by the experimental harness's file tools: a path the model gives, resolved against the
// working tree (context.cwd). Paths outside it are the box's to refuse: the module host confines
// every call (Landlock), so a read or write it does not allow fails with the system's error.

import path from 'node:path'

export type Context = { env: Record<string, string | undefined>; signal?: AbortSignal; cwd?: string }

/** ``given`` as an absolute path: relative ones from the working tree. */
export function resolvePath(given: unknown, context: Context, argument: string): string {
  const raw = String(given ?? '').trim()
  if (!raw) throw new Error(`\`${argument}\` is empty: name a file, e.g. src/index.ts`)
  return path.resolve(context.cwd ?? process.cwd(), raw)
}

/** How a path is shown to the model: relative to the working tree when inside it. */
export function shown(full: string, context: Context): string {
  const relative = path.relative(context.cwd ?? process.cwd(), full)
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : full
}
