"""The daemon's edge: who may call it (the token handed off on a socket, Yama, the refused
caller's process) and what a request must be before a tool runs (the Host allow-list, bounded
heads, bodies and pipelining, strict JSON, agent headers, counted refusals). It takes HTTP
requests and gives the serving part a call to run, or an answer in the rules' words."""
