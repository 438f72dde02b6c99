throw new Error('config file tools/settings.json is missing')
export default {}
