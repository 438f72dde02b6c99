"""A stand-in for the platform API (docs/platform-api.md): a real HTTP server on 127.0.0.1 that
checks the bearer token and serves fixed answers, recording every request it gets. The stand-ins'
shared pieces are here too: their JSON answers (``JSONHandler``) and their serving loop
(``serving``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

TOKEN = "test-token"
WEATHER_KEY = "weather-key"  # the key of the weather API of the design document's example


def _web(body: dict[str, Any]) -> dict[str, Any]:
    query = body["query"]
    results = [
        {"title": f"{query} — result {i}", "url": f"https://example.com/{i}?q={query}", "snippet": f"About {query}."}
        for i in range(1, 4)
    ]
    return {"results": results[: body.get("max_results", 5)]}


def _images(body: dict[str, Any]) -> dict[str, Any]:
    query = body["query"]
    return {
        "results": [
            {
                "title": f"{query} picture",
                "url": "https://images.example.com/1.jpg",
                "thumbnail_url": "https://images.example.com/1-thumb.jpg",
                "source": "https://example.com/gallery",
            }
        ]
    }


def _scrape(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "url": body["url"],
        "title": "Example Domain",
        "content": "# Example Domain\n\nThis domain is for use in examples.",
        "links": ["https://www.iana.org/domains/example"],
    }


def _translate(body: dict[str, Any]) -> dict[str, Any]:
    """For the `translate` tool that the language guide adds (tests/test_adding_a_beeuni_tool.py)."""
    return {"text": f"[{body['target']}] {body['text']}", "source": "en"}


ROUTES = {"/v1/search/web": _web, "/v1/search/images": _images, "/v1/scrape": _scrape, "/v1/translate": _translate}


class JSONHandler(BaseHTTPRequestHandler):
    """A stand-in server's request handler: JSON answers, and no access log on stderr (the tests
    read what was requested). Its socket sends at once (``TCP_NODELAY``): an answer's head and
    body are two writes, and the second would otherwise wait on the client's delayed ACK (~40 ms,
    which the benchmarks would count as the harness's)."""

    disable_nagle_algorithm = True

    def _json(self, status: int, document: dict[str, Any]) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class PlatformStandIn:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        standin = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                standin.requests.append((self.path, body))
                if self.headers.get("authorization") != f"Bearer {TOKEN}":
                    self._json(401, {"error": "missing or wrong bearer token"})
                elif self.path not in ROUTES:
                    self._json(404, {"error": f"no route {self.path}"})
                else:
                    self._json(200, ROUTES[self.path](body))

            def do_GET(self) -> None:
                """The design document's weather API: GET /v1/current?city=NAME."""
                url = urlsplit(self.path)
                standin.requests.append((url.path, dict(parse_qsl(url.query))))
                if self.headers.get("authorization") != f"Bearer {WEATHER_KEY}":
                    self._json(401, {"error": "missing or wrong API key"})
                elif url.path != "/v1/current":
                    self._json(404, {"error": f"no route {url.path}"})
                else:
                    city = dict(parse_qsl(url.query)).get("city", "")
                    self._json(200, {"city": city, "temp_c": 7.5, "conditions": "light rain"})

        self._stack = ExitStack()
        self.url = self._stack.enter_context(serving(Handler))

    def __enter__(self) -> PlatformStandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a request still open at the end does not keep the test waiting


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on an ephemeral 127.0.0.1 port, from a thread, for the duration of the
    block; its URL."""
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=handler.__name__, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
