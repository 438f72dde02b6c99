"""What a turn's opencode is told last: the rules' settings merged over the user's
``OPENCODE_CONFIG_CONTENT``, which is left as it is when it is not a JSON object."""

from __future__ import annotations

import json

from beeuni.cli.opencode_turn import with_settings


def test_the_settings_go_over_the_users_content() -> None:
    content = json.dumps({"agent": {"beeuni": {}}, "formatter": {"x": {"command": ["x"]}}, "shell": "/bin/zsh"})
    merged = with_settings(content, {"formatter": False, "lsp": False, "shell": "/turn/shell/launcher"})
    assert merged is not None
    assert json.loads(merged) == {
        "agent": {"beeuni": {}},
        "formatter": False,
        "lsp": False,
        "shell": "/turn/shell/launcher",
    }


def test_content_with_comments_is_read_as_opencode_reads_it() -> None:
    merged = with_settings('{\n  // the user\'s\n  "model": "a/b",\n}', {"lsp": False})
    assert merged is not None and json.loads(merged) == {"model": "a/b", "lsp": False}


def test_content_that_is_no_object_is_left_for_opencode_to_refuse() -> None:
    assert with_settings("[1, 2]", {"lsp": False}) == "[1, 2]"
    assert with_settings("{broken", {"lsp": False}) == "{broken"
    assert json.loads(with_settings(None, {"lsp": False}) or "") == {"lsp": False}
