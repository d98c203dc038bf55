"""cudakit's own messages in the participant's language, with English as the fallback.

The catalogue of a language is a gettext ``.po`` file, ``cudakit/i18n/locale/<lang>.po``,
read with Babel (no compile step). The language is ``$CUDAKIT_LANG`` if set, else the
locale of ``$LC_ALL``, ``$LC_MESSAGES`` or ``$LANG`` (``make lab LANG=ja`` sets
``CUDAKIT_LANG=ja``). A message without a translation stays English.

>>> import os
>>> os.environ["CUDAKIT_LANG"] = "ja"
>>> _("wrong result")
'結果が正しくありません'
>>> _("a sentence nobody translated")
'a sentence nobody translated'
>>> os.environ["CUDAKIT_LANG"] = "en"; _("wrong result")
'wrong result'
>>> del os.environ["CUDAKIT_LANG"]
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

LOCALE = Path(__file__).resolve().parent / "locale"


def language() -> str:
    """The two-letter language cudakit speaks now (``en`` when nothing else is asked for)."""
    for name in ("CUDAKIT_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        if value:
            code = value.split(".")[0].split("_")[0].lower()
            return code if code not in ("c", "posix") else "en"
    return "en"


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    """The translated messages of ``lang`` (msgid -> msgstr), empty if there is no catalogue."""
    path = LOCALE / f"{lang}.po"
    if not path.is_file():
        return {}
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        po = read_po(f)
    return {m.id: m.string for m in po if m.id and m.string and not m.fuzzy}


def _(message: str) -> str:
    """``message`` in the current language (gettext's ``_``); English when untranslated."""
    lang = language()
    if lang == "en" or not message:
        return message
    return catalogue(lang).get(message, message)
