"""The release a session serves: it takes the project's manifest and a commit (the config
release, copied into the daemon's private folder), resolves its tool set with the rules and loads
its modules in the module host, and gives each agent's view, grants and secrets, one call at a time,
and a convergence onto another release between calls."""
