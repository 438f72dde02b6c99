import { helper } from './helper'
import fs from 'node:fs'
export default { description: 'x', parameters: { type: 'object', properties: {} }, async execute() { return helper() } }
