"""The one path every string takes into SVG, HTML, DOT and PNG text: control characters made visible.

Names come from users (a layer named with an ANSI colour code, a Variable named ``"\\x00"``); XML
1.0 cannot hold most control characters, lone surrogates or U+FFFE/U+FFFF at all, and the rest draw
as nothing. `visible` shows each of them (C0 but tab, newline and carriage return; DEL; C1; lone
surrogates; U+FFFE, U+FFFF) as a Python-style escape (``\\x1b``, ``\\ud800``), so the drawing is
valid and says what the name holds. `esc` does that and then escapes ``& < > " '`` for SVG and
HTML. The DOT escapes (`gradviz.render.dot.escape_text`), the HTML of every widget (`esc`) and the
matplotlib texts of every figure (`gradviz.render.plot.plain_texts`) all go through `visible`.

>>> visible("\\x1b[31mred\\x1b[0m")
'\\\\x1b[31mred\\\\x1b[0m'
>>> esc("a<b\\x00")
'a&lt;b\\\\x00'
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["visible", "esc"]

_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: Any) -> str:
    """``str(text)`` with every character XML cannot hold, or that draws as nothing, as an escape.

    >>> visible("tab\\tstays, DEL \\x7f does not")
    'tab\\tstays, DEL \\\\x7f does not'
    """
    text = str(text)
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text


def esc(text: Any, quote: bool = True) -> str:
    """``text`` for SVG or HTML: `visible`, then ``& < >`` (and quotes, with ``quote``) escaped.

    >>> esc('"x" & <y>')
    '&quot;x&quot; &amp; &lt;y&gt;'
    """
    return html.escape(visible(text), quote=quote)
