"""``beeuni daemon``: the session daemon, one folder a part.

* ``serving/`` — the release a session serves: the session (``session.py``), one generation a
  release (``generation.py``) and what a convergence changed (``changes.py``), each agent's grants
  (``grants.py``), the secrets store (``secrets.py``) and the daemon's private folder
  (``private.py``). It takes a manifest and a commit, and gives the tools each agent is offered and
  a way to call them.
* ``host/`` — the module host: Bun running ``host.ts``, a process per agent and a Worker per call
  (``module_host.py``), their channel (``host_channel.py``), a module's load report (``probe.py``,
  Bun running ``probe_host.ts``, taken in a process of its own while the daemon starts:
  ``probe_process.py``; kept: ``probe_cache.py``),
  a call's contract — its arguments checked against the schema (``arguments.py``,
  ``schema_offer.py``), its output limited or spilled (``output.py``) — and one call without a
  server (``call_once.py``); where Bun is (``bun.py``).
* ``box/`` — the box the module host and the standard harness run in: how a module process starts
  (``sandbox.py``), Landlock (``confine.py``), the syscall filter (``syscall_filter.py``), no
  capabilities (``capabilities.py``), the same for opencode (``harness_box.py``).
* ``edge/`` — who may call, and what a request must be: the HTTP API (``app.py``, ``openapi.py``),
  the bounded edges (``http_edges.py``, ``unproven.py``, ``refusals.py``, ``hosts.py``,
  ``headers.py``, ``strict_json.py``), the token's hand-off (``handoff.py``), Yama
  (``ptrace_guard.py``) and the process at a connection's other end (``peer.py``, ``sockets.py``).
* ``turns/`` — the experimental harness's turn loop, which calls the served tools in process.

Beside them: the daemon's start and its serving (``server.py``), the starter's channel
(``control.py``: convergence, and the turns of the experimental harness), the log (``log.py``),
the rules' texts (``messages.py``) and the standard harness's plugin (``plugin.py``,
``opencode_plugin.ts``, with its bundled zod).
"""
