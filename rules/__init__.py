"""The policy: `tools.rules` and `agents.rules`, shipped as package data."""
