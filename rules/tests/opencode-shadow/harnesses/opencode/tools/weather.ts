export default { description: "", parameters: {}, execute: async () => "" }; // ok: tools/opencode-shadow (no tool of that name)
