// scrape_webpage — a Beeuni tool: fetch a web page through the platform API, as text.
//
// The web UI reads the output JSON: { url, title, content, links }. Keep that shape (and the
// `url` argument) if you change this copy.
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
  description: 'Read a web page: returns its title, its main text as Markdown, and its links.',
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The http or https URL of the page' },
    },
    required: ['url'],
  },
  async execute(args: { url?: string }, context: Context) {
    const url = String(args.url ?? '').trim()
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new Error(`scrape_webpage: \`${url}\` is not a URL: pass a full http or https address.`)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new Error(`scrape_webpage: \`${url}\` is not an http or https URL.`)
    const page = await callPlatform('/v1/scrape', { url: parsed.href }, context)
    return { url: page.url ?? parsed.href, title: page.title ?? '', content: page.content ?? '', links: page.links ?? [] }
  },
}
