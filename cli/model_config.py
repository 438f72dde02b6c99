"""The model of an experimental session, read from the configuration the standard harness reads:
opencode's ``provider`` entries and ``model``, so that a project configures its models once for
both harnesses.

Read, later ones winning (provider entries merged key by key, as opencode merges them): the
models of the user's global configuration (``$XDG_CONFIG_HOME/opencode/`` or
``~/.config/opencode/``: ``config.json``, ``opencode.json``, ``opencode.jsonc``; its ``provider``,
``model`` and ``small_model``, what a standard harness's turn is given of it too), the file
``OPENCODE_CONFIG`` names, the
project's ``opencode.json(c)`` and ``.opencode/opencode.json(c)`` *as the release holds them* (the
working tree is where the session's agents write: a provider address they wrote would receive
the conversation and the key), and ``OPENCODE_CONFIG_CONTENT``. ``{env:NAME}`` in a value is the
variable's value, as opencode reads it. Which providers the loop speaks, by which API, with which
key, is the rules' (``MODEL_PROVIDERS``, ``MODEL_PACKAGES`` in rules/turns.rules).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..daemon.turns.model import ModelChoice
from ..engine.yaml.located import unwrap

CONFIG_NAMES = ("config.json", "opencode.json", "opencode.jsonc")
PROJECT_FILES = ("opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc")
#: bytes of one configuration file read
MAX_CONFIG = 4 * 1024 * 1024
_ENV = re.compile(r"\{env:([^}]+)\}")


class ConfigProblem(Exception):
    """A configuration file that cannot be read: its path and why."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail


class NoModel(Exception):
    """Neither --model nor the configuration names a model."""


class ModelProblem(Exception):
    """The model named cannot be spoken: ``key`` is the rules' message key, with its blanks."""

    def __init__(self, key: str, **blanks: str) -> None:
        super().__init__(key)
        self.key = key
        self.blanks = blanks


#: what a session takes of the user's global opencode configuration: its models, never a plugin,
#: an MCP server, an agent or anything else that runs
MODEL_KEYS = ("provider", "model", "small_model")


def user_models(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The models of the user's global opencode configuration (``MODEL_KEYS`` of it): the
    standard harness's turn is given them too, so that a model is configured once for both."""
    env = os.environ if environ is None else environ
    home = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".config")
    merged: dict[str, Any] = {}
    for name in CONFIG_NAMES:
        document = _read(os.path.join(home, "opencode", name))
        if isinstance(document, dict):
            _merge(merged, {key: document[key] for key in MODEL_KEYS if key in document})
    return merged


def settings(release_root: str | None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """opencode's configuration as the experimental harness reads it (see above)."""
    env = os.environ if environ is None else environ
    merged = user_models(env)
    paths = [env["OPENCODE_CONFIG"]] if env.get("OPENCODE_CONFIG") else []
    if release_root is not None:
        paths += [os.path.join(release_root, name) for name in PROJECT_FILES]
    for path in paths:
        document = _read(path)
        if document is not None:
            _merge(merged, document)
    if env.get("OPENCODE_CONFIG_CONTENT"):
        _merge(merged, parse_config(env["OPENCODE_CONFIG_CONTENT"], "OPENCODE_CONFIG_CONTENT"))
    return merged


def choose(
    config: dict[str, Any],
    requested: str | None,
    providers: dict[str, dict[str, str | None]],
    packages: dict[str, str],
    environ: Mapping[str, str] | None = None,
) -> ModelChoice:
    """The model ``requested`` (``PROVIDER/MODEL``), else the configuration's ``model``."""
    env = os.environ if environ is None else environ
    named = requested or config.get("model")
    if not isinstance(named, str) or "/" not in named:
        raise NoModel()
    provider, model = named.split("/", 1)
    entry = (config.get("provider") or {}).get(provider)
    entry = entry if isinstance(entry, dict) else {}
    found = entry.get("options")
    options: dict[str, Any] = found if isinstance(found, dict) else {}
    known = providers.get(provider)
    package = entry.get("npm")
    if isinstance(package, str) and package in packages and options.get("baseURL"):
        api = packages[package]
    elif known is not None:
        api = str(known["api"])
    else:
        raise ModelProblem(
            "unknown_provider", detail=provider, tool=", ".join(sorted(providers)), path=", ".join(sorted(packages))
        )
    base_url = options.get("baseURL") or (known or {}).get("base_url")
    api_key = options.get("apiKey")
    variable = (known or {}).get("key")
    if not isinstance(api_key, str) or not api_key:
        api_key = None
        if known is not None and variable and not env.get(variable):
            raise ModelProblem("no_key", detail=provider, tool=str(variable))
    return ModelChoice(
        provider, model, api, base_url=str(base_url) if base_url else None, api_key=api_key, key_variable=variable
    )


def _read(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ConfigProblem(path, err.strerror or str(err)) from None
    if len(data) > MAX_CONFIG:
        raise ConfigProblem(path, f"larger than {MAX_CONFIG} bytes")
    return parse_config(data.decode("utf-8", "replace"), path)


def parse_config(source: str, path: str) -> Any:
    """The configuration's plain values, read as opencode reads JSON with comments (the reader the
    rules' ``json_files`` fact uses, ``engine/jsonc.py``)."""
    from ..engine.jsonc import JsonProblem, load_jsonc

    try:
        document = load_jsonc(source.encode("utf-8"), path)
    except JsonProblem as problem:
        raise ConfigProblem(path, f"{problem.detail} (line {problem.loc[1]}, column {problem.loc[2]})") from None
    return _plain(document)


def _plain(value: Any) -> Any:
    """A located value (``engine/yaml/located.py``) as plain JSON values, each ``{env:NAME}`` in a
    string replaced by the variable's value, as opencode reads its configuration."""
    value = unwrap(value)
    if isinstance(value, str):
        return _ENV.sub(lambda m: os.environ.get(m.group(1), ""), str(value))
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    return float(value) if isinstance(value, float) else int(value) if isinstance(value, int) else value


def _merge(into: dict[str, Any], document: Any) -> None:
    if not isinstance(document, dict):
        return
    for key, value in document.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
