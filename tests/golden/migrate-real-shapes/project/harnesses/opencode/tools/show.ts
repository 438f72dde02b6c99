// show — a Beeuni tool: show the user something in the web UI.
//
// The UI picks a view by this tool's name and reads the call's arguments: type, path, url,
// content, items. Keep them if you change this copy. The tool checks that what it names exists
// and returns what the UI renders.
//
// Imports only node:* modules. Paths are relative to context.cwd (the repository root).

import { stat } from 'node:fs/promises'
import path from 'node:path'

type Context = { env: Record<string, string | undefined>; signal?: AbortSignal; cwd?: string }
type Item = { title?: string; path?: string; url?: string; content?: string }
type Args = { type?: string; path?: string; url?: string; content?: string; items?: Item[]; title?: string }

const TYPES = ['file', 'image', 'url', 'markdown', 'items']

function checkUrl(url: string | undefined): string {
  const raw = String(url ?? '').trim()
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new Error(`show: \`${raw}\` is not a URL: pass a full http or https address`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`show: \`${raw}\` is not an http or https URL`)
  return parsed.href
}

async function checkPath(root: string, given: string | undefined): Promise<string> {
  const raw = String(given ?? '').trim()
  if (!raw) throw new Error('show: `path` is empty: name a file in the repository')
  const full = path.resolve(root, raw)
  const relative = path.relative(root, full)
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw new Error(`show: ${raw} is outside the repository`)
  const info = await stat(full).catch(() => null)
  if (!info) throw new Error(`show: ${raw} does not exist`)
  if (!info.isFile()) throw new Error(`show: ${raw} is not a file`)
  return relative
}

export default {
  description:
    'Show the user a file, an image, a web page, Markdown text or a list of items in the web UI. Use it to present results.',
  parameters: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: TYPES, description: 'What to show' },
      path: { type: 'string', description: 'file, image: a file in the repository' },
      url: { type: 'string', description: 'url (or image): an http or https address' },
      content: { type: 'string', description: 'markdown: the text' },
      items: {
        type: 'array',
        description: 'items: the entries, each with a title and a path, url or content',
        items: {
          type: 'object',
          properties: {
            title: { type: 'string' },
            path: { type: 'string' },
            url: { type: 'string' },
            content: { type: 'string' },
          },
        },
      },
      title: { type: 'string', description: 'A heading for the view' },
    },
    required: ['type'],
  },
  async execute(args: Args, context: Context) {
    const root = context.cwd ?? process.cwd()
    const title = args.title ?? null
    switch (args.type) {
      case 'file':
        return { type: 'file', title, path: await checkPath(root, args.path) }
      case 'image':
        return args.url
          ? { type: 'image', title, url: checkUrl(args.url) }
          : { type: 'image', title, path: await checkPath(root, args.path) }
      case 'url':
        return { type: 'url', title, url: checkUrl(args.url) }
      case 'markdown':
        if (typeof args.content !== 'string' || !args.content) throw new Error('show: markdown needs `content`')
        return { type: 'markdown', title, content: args.content }
      case 'items': {
        if (!Array.isArray(args.items) || args.items.length === 0) throw new Error('show: items needs a non-empty `items` list')
        const items = []
        for (const item of args.items) {
          const entry: Item = { title: item.title }
          if (item.path) entry.path = await checkPath(root, item.path)
          if (item.url) entry.url = checkUrl(item.url)
          if (item.content) entry.content = item.content
          items.push(entry)
        }
        return { type: 'items', title, items }
      }
      default:
        throw new Error(`show: unknown type \`${args.type}\`; types: ${TYPES.join(', ')}`)
    }
  },
}
