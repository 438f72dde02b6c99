// image_search — a Beeuni tool: search for images through the platform API.
//
// The web UI reads the output JSON: { query, results: [{ title, url, thumbnail_url, source }] }.
// Keep that shape (and the `query` argument) if you change this copy.
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
  description: 'Search for images. Returns image URLs with titles, thumbnails and the page each comes from.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What the images should show' },
      max_results: { type: 'integer', description: 'How many images (default 8, at most 50)' },
    },
    required: ['query'],
  },
  async execute(args: { query?: string; max_results?: number }, context: Context) {
    const query = String(args.query ?? '').trim()
    if (!query) throw new Error('image_search: `query` is empty: describe the images to find.')
    const limit = Math.min(Math.max(Math.trunc(args.max_results ?? 8), 1), 50)
    const answer = await callPlatform('/v1/search/images', { query, max_results: limit }, context)
    return { query, results: answer.results ?? [] }
  },
}
