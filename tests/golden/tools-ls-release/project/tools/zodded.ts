import { z } from 'zod'
export default {
  description: 'Uses zod.',
  parameters: { type: 'object', properties: {} },
  async execute() { return 'ok' },
}
