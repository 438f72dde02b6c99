export default function lookup() { return 'x' }
