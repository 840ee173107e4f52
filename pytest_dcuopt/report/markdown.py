"""Text from kernels, compilers and users placed in Markdown or on one terminal line.

Branch and case names, messages and commands can hold `|`, backticks, `*`, `<` and newlines: each is escaped
where it lands, so it shows as written and never ends a table row, a code span or a fenced block early."""
from __future__ import annotations

import re
from typing import Any

_INLINE_SPECIALS = re.compile(r"([\\`*\[\]|])")


def md_text(text: Any) -> str:
    """Inline Markdown text (a table cell, a list item) that shows `text` literally, on one line."""
    flat = " ".join(str(text).splitlines())
    return _INLINE_SPECIALS.sub(r"\\\1", flat).replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: Any) -> str:
    """An inline code span holding `text` (one line): delimited by more backticks than any run inside it."""
    flat = " ".join(str(text).splitlines())
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_fence(text: Any) -> list[str]:
    """A fenced code block holding `text` verbatim: the fence is longer than any backtick run inside it."""
    body = str(text)
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return [fence, body, fence]


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def one_line(text: Any) -> str:
    """For the terminal: newlines shown as `\\n`, so a name or reason never breaks a table row."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def table(rows: list[list[str]], headers: list[str]) -> list[str]:
    """A Markdown table (the terminal shows the same), each column as wide as its widest cell."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in rows]
    return [line, rule, *body]
