process.exit(3)
export default {}
