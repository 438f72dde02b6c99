"""The module host: tool modules run in Bun, a process per agent and a Worker per call. It takes
module paths and gives their load report (description, parameters) and each call's outcome; a
call's contract — the arguments checked against the module's schema, the output limited or
spilled to a file — is here too, so that both harnesses and ``beeuni tools call`` share it."""
