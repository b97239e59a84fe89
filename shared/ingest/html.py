"""HTML files: consumes an HTML page (a filing as EDGAR serves it, a saved web page),
produces its text, its tables and its <title>, through the standard library's
`html.parser` (tolerant of the broken markup real pages have, no dependency).

- Text: what a browser shows, one line per block (paragraph, heading, list item, row),
  without scripts, styles or hidden elements (`display:none`, as inline XBRL hides its
  header); character references decoded.
- Pages: an element styled `page-break-before: always` starts a page and one styled
  `page-break-after: always` ends one (as EDGAR filings mark their printed pages);
  pages are joined by `PAGE_BREAK`. A page without such marks is one page.
- Tables: each <table>'s rows of cell texts go to the table reader. A cell spanning
  columns keeps its text in one of them and leaves the others empty (the grid the
  reader takes has no spans): a figure in the last (figures align right: a filing
  spans a figure over the "$" column of the rows that have one), a heading over the
  first column of its span that holds figures (where its figures are), else in the
  first. with the caption, or the line just above the
  table when it is short ("(In millions)"), as its title; in the text the table is
  written a row a line, its cells in columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from shared.errors import InputError, fault
from shared.search.document import PAGE_BREAK
from shared.models.table import Table
from shared.tables.read import tables_from_rows

BLOCKS = frozenset("""address article aside blockquote br caption dd div dl dt figcaption figure
footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table tbody td tfoot th
thead tr ul""".split())
"""Elements that start a new line of text."""
HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "svg", "object"})
"""Elements whose content is not shown as text."""
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
TITLE_LINE = 150
"""The longest line above a table read as its title."""
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none", re.I)
_BREAK_BEFORE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page)", re.I)
_BREAK_AFTER = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page)", re.I)
_SPACES = re.compile(r"\s+")
_FIGURE = re.compile(r"[\s$€£¥(),.%\-–—]*\d[\d\s$€£¥(),.%\-–—]*")
_YEAR = re.compile(r"\(?(?:19|20)\d\d\)?")


@dataclass(frozen=True)
class HtmlText:
    content: str
    """The text, pages joined by PAGE_BREAK."""
    tables: list[Table]
    title: str | None
    """The page's <title>, if it has one."""
    pages: int
    unread: list[str] = field(default_factory=list)
    """The tables the table reader failed on (their text is kept), each with the error."""


@dataclass
class _Grid:
    rows: list[list[tuple[int, str]]] = field(default_factory=list)
    """Each row's cells as (columns spanned, text)."""
    cell: list[str] | None = None
    """The text of the cell open, if any."""
    span: int = 1
    """The columns the open cell spans."""
    caption: list[str] = field(default_factory=list)
    above: str = ""
    """The line of text just above the table."""


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []
        self.tables: list[Table] = []
        self.unread: list[str] = []
        self.title: str | None = None
        self._title: list[str] | None = None
        self._open: list[tuple[str, bool]] = []  # (tag, hides) of the elements open
        self._hidden = 0
        self._grids: list[_Grid] = []
        self._in_caption = False

    # -- structure --------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        style = " ".join(v or "" for k, v in attrs if k == "style")
        if _BREAK_BEFORE.search(style) and not self._grids:
            self._page_break()
        hides = tag in HIDDEN or bool(_HIDDEN_STYLE.search(style))
        if tag == "title" and self.title is None:
            self._title = []
        if tag not in VOID:
            self._open.append((tag, hides))
            self._hidden += hides
        if self._hidden:
            return
        if tag == "table":
            self._end_line()
            self._grids.append(_Grid(above=self._last_line()))
        elif self._grids and tag == "tr":
            self._grids[-1].rows.append([])
        elif self._grids and tag in ("td", "th"):
            grid = self._grids[-1]
            if not grid.rows:
                grid.rows.append([])
            grid.cell, grid.span = [], _int(next((v for k, v in attrs if k == "colspan"), None))
        elif self._grids and tag == "caption":
            self._in_caption = True
        elif self._grids and self._grids[-1].cell is not None and tag in BLOCKS:
            self._grids[-1].cell.append(" ")  # lines of one cell: "March 29," over "2025"
        elif tag in BLOCKS:
            self._end_line()
        if tag in VOID and _BREAK_AFTER.search(style) and not self._grids:
            self._page_break()

    def handle_endtag(self, tag: str) -> None:
        if not any(t == tag for t, _ in self._open):
            return  # a stray end tag
        while self._open:
            name, hides = self._open.pop()
            self._hidden -= hides
            if name == "title" and self._title is not None:
                self.title, self._title = _SPACES.sub(" ", "".join(self._title)).strip() or None, None
            elif not self._hidden:
                self._closed(name)
            if name == tag:
                break

    def _closed(self, tag: str) -> None:
        if self._grids and tag in ("td", "th"):
            self._close_cell()
        elif self._grids and tag == "caption":
            self._in_caption = False
        elif tag == "table" and self._grids:
            self._close_cell()
            self._table(self._grids.pop())
        elif tag in BLOCKS:
            self._end_line()

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title.append(data)
            return
        if self._hidden:
            return
        if self._grids:
            grid = self._grids[-1]
            if self._in_caption:
                grid.caption.append(data)
            elif grid.cell is not None:
                grid.cell.append(data)
            return
        self.line.append(data)

    # -- text -------------------------------------------------------------------------
    def _end_line(self) -> None:
        text = _SPACES.sub(" ", "".join(self.line)).strip()
        self.line = []
        page = self.pages[-1]
        if text:
            page.append(text)
        elif page and page[-1]:
            page.append("")  # one blank line between blocks that leave a gap

    def _last_line(self) -> str:
        return next((line for line in reversed(self.pages[-1]) if line), "")

    def _page_break(self) -> None:
        self._end_line()
        if any(self.pages[-1]):
            self.pages.append([])

    def _close_cell(self) -> None:
        grid = self._grids[-1]
        if grid.cell is not None and grid.rows:
            grid.rows[-1].append((grid.span, _SPACES.sub(" ", "".join(grid.cell)).strip()))
        grid.cell, grid.span = None, 1

    def _table(self, grid: _Grid) -> None:
        rows = [row for row in cells_in_columns(grid.rows) if any(row)]
        if not rows:
            return
        caption = _SPACES.sub(" ", "".join(grid.caption)).strip()
        title = caption or (grid.above if len(grid.above) <= TITLE_LINE else None) or None
        try:
            self.tables += tables_from_rows(rows, page=len(self.pages), title=title)
        except Exception as e:  # noqa: BLE001 - the reader's fault costs this table only
            self.unread.append(f"page {len(self.pages)}: the table {title or rows[0][0]!r} "
                               f"was not read ({fault(e)}); its text is indexed")
        text = _columns(rows)
        if self._grids:  # a table inside a cell: its text is the cell's
            outer = self._grids[-1]
            if outer.cell is not None:
                outer.cell.append(" " + " ".join(text) + " ")
            return
        self.pages[-1] += [*text, ""]

    def finish(self) -> None:
        while self._grids:
            self._close_cell()
            self._table(self._grids.pop())
        self._end_line()


def _figure(text: str) -> bool:
    return bool(_FIGURE.fullmatch(text)) and not _YEAR.fullmatch(text)


def cells_in_columns(rows: list[list[tuple[int, str]]]) -> list[list[str]]:
    """Rows of (span, text) cells as a grid without spans: a spanning figure in the last
    column of its span, other text over the first column of its span where figures
    are (or the first of its span)."""
    figures: set[int] = set()
    for row in rows:
        at = 0
        for span, text in row:
            if _figure(text):
                figures.add(at + span - 1)
            at += span
    grid = []
    for row in rows:
        out, at = [], 0
        for span, text in row:
            place = at + span - 1 if _figure(text) else next(
                (c for c in range(at, at + span) if c in figures), at)
            out += [""] * span
            out[place] = text
            at += span
        grid.append(out)
    return grid


def _columns(rows: list[list[str]]) -> list[str]:
    """`rows` as lines, each cell padded to its column's width (two spaces between)."""
    width = max(len(r) for r in rows)
    cells = [r + [""] * (width - len(r)) for r in rows]
    used = [j for j in range(width) if any(r[j] for r in cells)]
    sizes = {j: max(len(r[j]) for r in cells) for j in used}
    return ["  ".join(r[j].ljust(sizes[j]) for j in used).rstrip() for r in cells]


def _int(value: str | None) -> int:
    try:
        return min(int(value or 1), 100)  # a span past the table's width is a typo
    except ValueError:
        return 1


def read_html(path: Path) -> HtmlText:
    """The text, tables and title of the HTML file at `path`."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror or e})") from None
    reader = _Reader()
    reader.feed(_decoded(raw))
    reader.close()
    reader.finish()
    pages = ["\n".join(lines).strip("\n") for lines in reader.pages]
    while len(pages) > 1 and not pages[-1].strip():
        pages.pop()  # a break after the last page opens none
    if not any(p.strip() for p in pages):
        raise InputError(f"{path}: the page holds no text to index; check that it is the "
                         "document itself and not a frame or a script that loads it")
    tables = reader.tables if len(pages) > 1 else [t.model_copy(update={"page": None})
                                                     for t in reader.tables]
    return HtmlText(PAGE_BREAK.join(pages), tables, reader.title, len(pages), reader.unread)


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([\w-]+)""", re.I)


def _decoded(raw: bytes) -> str:
    """The page as text: in the charset it declares, else UTF-8, else Windows-1252 (what
    browsers assume of an undeclared page that is not UTF-8)."""
    head = raw[:4096]
    declared = _CHARSET.search(head) or _XML_ENCODING.search(head)
    for encoding in ([declared.group(1).decode("ascii")] if declared else []) + ["utf-8"]:
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return raw.decode("cp1252", errors="replace")
