export const helper = () => 'helped'
