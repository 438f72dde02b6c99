// Shared by the GitHub tools: a fetch that reports to opencode's context
export async function fetchJson(ctx: { abort: AbortSignal; metadata(input: { title?: string }): void }, url: string, token?: string) {
  ctx.metadata({ title: url })
  const response = await fetch(url, { signal: ctx.abort, headers: token ? { authorization: `Bearer ${token}` } : {} })
  return response.json()
}
