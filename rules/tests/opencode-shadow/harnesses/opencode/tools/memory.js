export default { description: "", parameters: {}, execute: async () => "" }; // expect: tools/opencode-shadow
