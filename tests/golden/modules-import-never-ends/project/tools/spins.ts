while (true) {}
export default {}
