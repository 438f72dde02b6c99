// web_search — a Beeuni tool: search the web through the platform API.
//
// Several queries may be joined by `|||`; they run in parallel. The web UI reads the output
// JSON: { results: [{ query, results: [{ title, url, snippet }] }] }. Keep that shape (and the
// `query` argument) if you change this copy.
//
// Imports nothing; reads BEEUNI_API_URL and BEEUNI_TOKEN from context.env.

type Env = Record<string, string | undefined>
type Context = { env: Env; signal?: AbortSignal }

async function callPlatform(route: string, body: unknown, context: Context): Promise<any> {
  const base = context.env.BEEUNI_API_URL
  if (!base) throw new Error('BEEUNI_API_URL is not set: the daemon sets it for every session; set it when running this tool by hand.')
  const token = context.env.BEEUNI_TOKEN
  if (!token) throw new Error('BEEUNI_TOKEN is not set: the daemon sets it for every session; set it when running this tool by hand.')
  const response = await fetch(`${base.replace(/\/+$/, '')}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: context.signal,
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`the platform API answered ${response.status} for ${route}: ${text.slice(0, 500)}`)
  return JSON.parse(text)
}

export default {
  description:
    'Search the web. Returns titles, URLs and snippets. Several queries can be joined with "|||" and run at once.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The search query; join several with "|||"' },
      max_results: { type: 'integer', description: 'Results per query (default 5, at most 20)' },
    },
    required: ['query'],
  },
  async execute(args: { query?: string; max_results?: number }, context: Context) {
    const queries = String(args.query ?? '')
      .split('|||')
      .map((query) => query.trim())
      .filter(Boolean)
    if (queries.length === 0) throw new Error('web_search: `query` is empty: pass the words to search for.')
    const limit = Math.min(Math.max(Math.trunc(args.max_results ?? 5), 1), 20)
    const answers = await Promise.all(
      queries.map((query) => callPlatform('/v1/search/web', { query, max_results: limit }, context)),
    )
    return {
      results: answers.map((answer, index) => ({ query: queries[index], results: answer.results ?? [] })),
    }
  },
}
