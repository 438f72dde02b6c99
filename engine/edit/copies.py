"""Whether a file is a copy of a Beeuni tool: by its content, never by its name.

A project may hold its own tool named like a Beeuni tool; only the text tells a copy of the Beeuni
tool from it. The text is compared as a digest of its normalised form, so that a copy checked
out with other line ends (``core.autocrlf``), saved with a byte order mark or with trailing
blanks trimmed by an editor is still recognised, while any change of its code is not. The rules
hold the digests of what earlier releases shipped (``BEEUNI_TOOL_EARLIER_DIGESTS``); the one of
the source shipped now is made from the file itself.
"""

from __future__ import annotations

import hashlib
import re

_LINE_END = re.compile(rb"\r\n|\r")
_TRAILING = re.compile(rb"[ \t]+\n")
_BOM = b"\xef\xbb\xbf"
#: the digest's form, as the rules write it: ``sha256:<hex>``
ALGORITHM = "sha256"


def normalised(data: bytes) -> bytes:
    """The text with its byte order mark dropped, every line end ``\\n``, no blanks at a line's
    end and no blank lines at either end of the file."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    data = _TRAILING.sub(b"\n", _LINE_END.sub(b"\n", data) + b"\n")
    return data.strip(b"\n") + b"\n"


def content_digest(data: bytes) -> str:
    """The digest of ``data``'s normalised text, as the rules list them."""
    return f"{ALGORITHM}:{hashlib.sha256(normalised(data)).hexdigest()}"
