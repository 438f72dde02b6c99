export const shared = 'shared'
