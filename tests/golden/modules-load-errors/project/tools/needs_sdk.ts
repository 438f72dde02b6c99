import { Orders } from 'orders-sdk'
export default { description: 'x', parameters: { type: 'object', properties: {} }, execute() { return new Orders() } }
