"""The language server, ``beeuni lsp`` (``server.py``): the engine's diagnostics as you type,
hover and completion from the rules' data, for any editor that speaks LSP."""
