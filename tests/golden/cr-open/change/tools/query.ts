export const query = () => 'results'
