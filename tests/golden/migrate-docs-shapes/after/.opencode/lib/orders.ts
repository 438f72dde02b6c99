export function lookupUrl(order: string): string {
  return `orders/${order}`
}
