import { query } from './query'
export default { description: 'Search the web', parameters: { type: 'object', properties: {} }, execute: () => query() }
