"""The box: what a confined process (a module host, or the standard harness's opencode) may open
and do — Landlock rules, a syscall filter, no capabilities, a scrubbed environment. It takes the
folders to allow and gives a process start (or a pre-exec hook) that applies them."""
