// webfetch — the experimental harness's tool: a URL's content, as text, markdown or HTML.
// Arguments as opencode's `webfetch`: url, format, timeout (seconds, at most 120).

const MAX_BYTES = 5 * 1024 * 1024

type Context = { env: Record<string, string | undefined>; signal?: AbortSignal; cwd?: string }

function textOf(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6]|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

export default {
  description: 'Fetch a URL (http or https) and return its content as text, markdown or HTML.',
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The URL to fetch content from' },
      format: { type: 'string', enum: ['text', 'markdown', 'html'], default: 'markdown', description: 'The format to return the content in' },
      timeout: { type: 'number', description: 'Optional timeout in seconds (max 120)' },
    },
    required: ['url'],
  },
  async execute(args: { url: string; format?: string; timeout?: number }, context: Context) {
    if (!/^https?:\/\//i.test(args.url)) throw new Error('`url` must start with http:// or https://')
    const seconds = Math.min(Math.max(args.timeout ?? 30, 1), 120)
    const signals = [AbortSignal.timeout(seconds * 1000), ...(context.signal ? [context.signal] : [])]
    const response = await fetch(args.url, { signal: AbortSignal.any(signals), redirect: 'follow' })
    if (!response.ok) throw new Error(`${args.url} answered ${response.status} ${response.statusText}`)
    const body = await response.text()
    if (body.length > MAX_BYTES) throw new Error(`${args.url} is larger than ${MAX_BYTES} bytes`)
    const html = (response.headers.get('content-type') ?? '').includes('html')
    return args.format === 'html' || !html ? body : textOf(body)
  },
}
