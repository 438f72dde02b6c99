"""A manifest file's bytes as text, and an edited text back as bytes of the same encoding.

The file may be UTF-8 or UTF-16, with or without a byte order mark; the text has no mark, and
``encode`` puts the file's own back. A file that is no text refuses an edit here already
(``EditRefused``, the refusal of every edit: ``edit/entries.py``). Its own module, without ``edit/entries.py``'s
YAML reading: ``validate`` decodes every manifest file it looks for suppression comments in.
"""

from __future__ import annotations

import codecs

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


class EditRefused(Exception):
    """The edit cannot be made safely; nothing was changed."""


class ManifestText:
    """A file's text, and how to turn an edited text back into bytes in the file's encoding."""

    def __init__(self, text: str, bom: bytes, encoding: str) -> None:
        self.text = text
        self.bom = bom
        self.encoding = encoding

    @classmethod
    def decode(cls, data: bytes) -> ManifestText:
        bom, encoding = b"", "utf-8"
        for mark, name in _BOMS:
            if data.startswith(mark):
                bom, encoding = mark, name
                break
        try:
            return cls(data[len(bom) :].decode(encoding), bom, encoding)
        except UnicodeDecodeError as err:
            raise EditRefused(f"the file is not valid {encoding.upper()} (byte {err.start + len(bom)})") from None

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding)
