"""MkDocs hook: pages include the repository's own files instead of copies.

A page line ``<!-- include: FILE -->`` is replaced by FILE (a path from the
repository root), ``<!-- include: FILE#Heading -->`` by the section of FILE
under that ``## Heading`` (up to the next heading of the same level), and
``<!-- include-code: FILE -->`` by FILE as a fenced code block. So
REPRODUCTION.md's tables and README's performance numbers appear on the
site without being forked. Links in included text are written from the
repository root (``docs/figures/x.png``, ``REPRODUCTION.md#...``); they are
rewritten relative to the including page, and links to files that are not
part of the site (source files, benches) become plain text.

Docstrings use Sphinx roles (``:class:`X```, ``:func:`~m.f```) so that
``help()`` and IDEs read well; mkdocstrings renders them verbatim, so
:func:`on_page_content` drops the role and keeps the name as code (``~``
keeps the last component, as Sphinx does).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
DIRECTIVE = re.compile(r"^<!-- (include|include-code): ([^#\s]+)(?:#(.+?))? -->$", re.MULTILINE)
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
# Root files that are pages of the site under another name.
PAGES = {"README.md": "index.md", "REPRODUCTION.md": "guide/experiments.md"}
# A role as Markdown renders it: the role text, then the name as code.
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):<code>(~?)([^<]+)</code>")


def _section(text: str, heading: str, source: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(#+) (.*)$", line)
        if m and m.group(2).strip() == heading:
            level = len(m.group(1))
            end = next((j for j in range(i + 1, len(lines))
                        if re.match(rf"^#{{1,{level}}} ", lines[j])), len(lines))
            return "\n".join(lines[i:end])
    raise ValueError(f"{source}: no heading {heading!r}")


def _rewrite_links(text: str, page_dir: str) -> str:
    def fix(m: re.Match[str]) -> str:
        bang, label, target = m.groups()
        if re.match(r"^[a-z]+://|^#|^mailto:", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        if path in PAGES:
            site_path = PAGES[path]
        elif path.startswith("docs/"):
            site_path = path[len("docs/"):]
        else:
            return f"{label} (`{path}`)" if not bang else label
        rel = posixpath.relpath(site_path, page_dir or ".")
        return f"{bang}[{label}]({rel}{'#' + anchor if anchor else ''})"

    return LINK.sub(fix, text)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    page_dir = posixpath.dirname(page.file.src_uri)

    def expand(m: re.Match[str]) -> str:
        kind, name, heading = m.groups()
        source = ROOT / name
        text = source.read_text(encoding="utf-8")
        if kind == "include-code":
            return f"```python title=\"{name}\"\n{text.rstrip()}\n```"
        if heading:
            text = _section(text, heading, name)
        return _rewrite_links(text, page_dir)

    return DIRECTIVE.sub(expand, markdown)


def strip_roles(html: str) -> str:
    """``:class:<code>~a.B</code>`` -> ``<code>B</code>`` (see the module docstring)."""

    def name(m: re.Match[str]) -> str:
        short, target = m.groups()
        return f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"

    return ROLE.sub(name, html)


def on_page_content(html: str, **_: Any) -> str:
    return strip_roles(html)
