export function greeting() { return 'hello' }
