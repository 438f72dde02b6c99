"""The headers that name the calling agent and its parent, limited in size: a name from a
request is kept in answers and logs, so a megabyte of it is refused before anything reads it."""

from __future__ import annotations

from collections.abc import Mapping

MAX_HEADER = 1024  # bytes of `X-Beeuni-Agent` or `X-Beeuni-Parent`
AGENT_HEADERS = ("x-beeuni-agent", "x-beeuni-parent")


class HeaderTooLarge(Exception):
    def __init__(self, header: str) -> None:
        super().__init__(header)
        self.header = header


def agent_headers(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The calling agent and its parent (``None``: not given), or ``HeaderTooLarge``."""
    found = []
    for header in AGENT_HEADERS:
        value = headers.get(header)
        if value is not None and len(value.encode("utf-8", "surrogateescape")) > MAX_HEADER:
            raise HeaderTooLarge(header)
        found.append(value)
    return found[0], found[1]
