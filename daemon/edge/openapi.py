"""The daemon's OpenAPI document (``GET /beeuni/openapi.json``), written out by hand.

The call route is a plain route of the app's router, kept off FastAPI's parameter machinery
for speed (``app.py``), so FastAPI cannot describe it: this module does, for both routes, with
every answer the daemon gives. The tools the session serves now are listed as examples of a
tool's name. A test runs schemathesis against the document and the running daemon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..serving.generation import Generation

from .headers import MAX_HEADER
from .http_edges import MAX_HEAD, MAX_HEADERS
from .strict_json import MAX_DEPTH

ERROR = {"$ref": "#/components/schemas/Error"}


def _answer(description: str, schema: dict[str, Any] = ERROR) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _optional(place: str, name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter of a request: in its ``header`` or its ``query``."""
    return {"name": name, "in": place, "required": False, "description": description, "schema": schema}


STRING, FLAG = {"type": "string"}, {"type": "boolean", "default": False}


HEADER_TOO_LARGE = _answer(
    f"The request's line and headers are over {MAX_HEAD} bytes or {MAX_HEADERS} headers (answered before the"
    f" token or the body is read), or `X-Beeuni-Agent` or `X-Beeuni-Parent` is longer than {MAX_HEADER} bytes."
)
TIMED_OUT = _answer("The request did not arrive in full within the daemon's read timeout; the connection is closed.")
AGENT_HEADERS = [
    _optional("header", "X-Beeuni-Agent", "The calling agent (default: the session's agent).", STRING),
    _optional("header", "X-Beeuni-Parent", "The agent that started the caller as a subagent.", STRING),
]
SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "properties": {"error": {"type": "string"}},
        "required": ["error"],
        "additionalProperties": False,
    },
    "Output": {
        "type": "object",
        "description": "The tool's output; over 50 KB or 2,000 lines its beginning, the whole in `path`.",
        "properties": {
            "output": {"type": "string"},
            "truncated": {"type": "boolean"},
            "size": {"type": "integer", "description": "bytes of the whole output (when truncated)"},
            "lines": {"type": "integer", "description": "lines of the whole output (when truncated)"},
            "path": {"type": "string", "description": "the file that holds the whole output (when truncated)"},
        },
        "required": ["output", "truncated"],
        "additionalProperties": False,
    },
    "ToolList": {
        "type": "object",
        "properties": {
            "harness": {"type": "string"},
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "parameters": {"type": "object", "description": "a JSON Schema of the arguments"},
                    },
                    "required": ["name", "description", "parameters"],
                },
            },
            "hidden": {
                "type": "object",
                "description": "with `all`: for each declared agent, the tools the harness offers that it does not see",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
            },
            "permission": {
                "type": "object",
                "description": "with `all`: each declared agent's `permission`, as ordered rules (the last match wins)",
                "additionalProperties": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "permission": {"type": "string"},
                            "pattern": {"type": "string"},
                            "action": {"type": "string"},
                        },
                        "required": ["permission", "pattern", "action"],
                    },
                },
            },
        },
        "required": ["harness", "tools"],
        "additionalProperties": False,
    },
}


def openapi_document(loaded: Generation, max_body: int) -> dict[str, Any]:
    served = sorted(name for name in loaded.host.loaded if name not in loaded.harness_validators)
    name = {
        "name": "name",
        "in": "path",
        "required": True,
        "description": "The tool's name.",
        "schema": {"type": "string"},
        "examples": {tool: {"value": tool} for tool in served},
    }
    call = {
        "summary": "Run a tool",
        "operationId": "call_tool",
        "parameters": [name, *AGENT_HEADERS],
        "requestBody": {
            "required": False,
            "description": f"The call's arguments, a JSON object (none: `{{}}`), at most {max_body} bytes.",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        "responses": {
            "200": _answer("The tool's output.", {"$ref": "#/components/schemas/Output"}),
            "400": _answer(
                "The body is not strict JSON (no NaN or Infinity, no integer a double cannot hold exactly)"
                f" or nests deeper than {MAX_DEPTH} levels;"
                " or the Host is not the daemon's."
            ),
            "401": _answer("No bearer token, or the wrong one."),
            "403": _answer("The agent does not see the tool, or its parent cannot start subagents."),
            "404": _answer("No tool of that name is loaded."),
            "413": _answer(f"The body is larger than {max_body} bytes; the tool was not run."),
            "422": _answer("The arguments are no JSON object (the tool was not run), or the tool threw."),
            "408": TIMED_OUT,
            "431": HEADER_TOO_LARGE,
            "499": _answer("The client went away; the call was aborted."),
            "502": _answer(
                "The module host stopped during the call (a crash, an exit, a kill); other calls are not affected."
            ),
            "504": _answer("The tool did not finish in time and was stopped."),
        },
    }
    listing = {
        "summary": "The tools the calling agent sees",
        "operationId": "list_tools",
        "parameters": [
            _optional("query", "all", "Every tool the session serves, whoever sees it.", FLAG),
            _optional(
                "query",
                "without_zod",
                "Sent by the standard harness's plugin when it found no zod to carry the schemas exactly:"
                " the daemon logs it once.",
                FLAG,
            ),
            *AGENT_HEADERS,
        ],
        "responses": {
            "200": _answer("The tools, with description and parameters.", {"$ref": "#/components/schemas/ToolList"}),
            "400": _answer("The Host is not the daemon's."),
            "401": _answer("No bearer token, or the wrong one."),
            "403": _answer("The parent is no agent of the project, or cannot start subagents."),
            "408": TIMED_OUT,
            "422": _answer("The query does not validate."),
            "431": HEADER_TOO_LARGE,
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "beeuni daemon", "version": "1"},
        "paths": {"/beeuni/tools": {"get": listing}, "/beeuni/tools/{name}": {"post": call}},
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
