import { greeting } from './helper'
export default {
  description: 'Looks up.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'ok' },
}
