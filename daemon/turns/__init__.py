"""The experimental harness's turn loop, inside the daemon.

It takes a turn — an agent, a prompt and the conversation so far — and gives back the model's
final answer, the conversation continued and the turn's record (what `sessions log` shows), as
events on the starter's channel (``control.py``):

* ``model.py``: the model a turn talks to, from the starter's choice (provider, model, address,
  key), through pydantic-ai's model clients: the providers' protocols, streaming and message
  history are theirs, the loop is ours.
* ``offer.py``: what an agent is offered — its view of the served tools and the harness's own
  tools, each with the schema the module declares.
* ``calls.py``: one tool call, run in process: a served tool through the session's generation
  (the same argument checks, output contract and texts as an HTTP call, without token or
  loopback), a harness tool through the same module host and box, ``task`` as a subagent's turn.
* ``loop.py``: the loop itself: ask the model, run what it calls, until it answers.
* ``record.py``: the conversation kept between turns, and the turn's record in the shape
  `sessions log` reads for both harnesses.

The policy — which tools exist, who sees what, the permission of each agent, every text — comes
from the rules, as for an HTTP call.
"""
