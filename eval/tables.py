"""Table rendering for reports: value formatting, Markdown tables and aligned plain-text tables."""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

MISSING = "n/a"


def format_value(value: object, digits: int = 4) -> str:
    """Format a metric for a table: ints as is, floats to ``digits`` decimals, NaN/None as ``"n/a"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def with_change(cell: str, change: float | None, digits: int = 4) -> str:
    """A table ``cell`` followed by ``change`` in brackets, signed (``0.7000 (-0.2000)``), where ``change`` is a finite
    number; the cell alone where it is ``None`` or NaN (a figure missing on either side)."""
    if change is None or not math.isfinite(change):
        return cell
    return f"{cell} ({change:+.{digits}f})"


def format_ece_range(metrics: Mapping[str, Any]) -> str:
    """``"0.126–0.210"``: the ECE range a calibrated model would show, from a metrics dict's
    ``ece_if_calibrated_low`` / ``_high``; ``"n/a"`` when it has none."""
    low, high = metrics.get("ece_if_calibrated_low"), metrics.get("ece_if_calibrated_high")
    return MISSING if low is None or high is None else f"{format_value(low, digits=3)}–{format_value(high, digits=3)}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; the first column is left-aligned, the others right-aligned.

    Cells are escaped (``markdown_cell``) so that a label reads as written: a ``|`` or a line break inside it
    does not split a column or a row, and one that looks like HTML (``<script>``) is shown, not run; a ``Markdown``
    cell, faim's own, is kept as it is.
    """

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"

    rule = "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


DIRECTION_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Unicode's embeddings, overrides and isolates (LRE to RLO, LRI to PDI): invisible, and one left open turns the rest
of its line (a table's row) right to left, its figures shown reversed."""
LEFT_TO_RIGHT_MARK = "\u200e"


def left_to_right(text: str) -> str:
    """``text`` without ``DIRECTION_CONTROLS``, and where it holds right-to-left letters (Arabic, Hebrew), between
    left-to-right marks, so that the bars, brackets and figures written after it in a left-to-right line are not read
    as part of right-to-left text and shown before it or reversed."""
    shown = DIRECTION_CONTROLS.sub("", text)
    if any(unicodedata.bidirectional(character) in ("R", "AL") for character in shown):
        return f"{LEFT_TO_RIGHT_MARK}{shown}{LEFT_TO_RIGHT_MARK}"
    return shown


MARKDOWN_PUNCTUATION = re.compile(r"(?<=[^\W_])(_+)(?=[^\W_])|([\\`*_\[\]|~$])")
"""The ASCII punctuation Markdown reads inside a line of text: a backslash (an escape), a backtick (a code span,
opened or closed, faim's own too), ``*`` and ``_`` (emphasis; not ``_`` inside a word, ``hate_speech``, which Markdown
reads as written and which the first alternative matches to keep), brackets (a link or an image), ``|`` (a table
cell's end), ``~`` (struck text) and ``$`` (mathematics, on GitHub). Not ``#``, which it reads only at a line's start
(where faim puts no name, whose line breaks it writes as spaces) or at a heading's end (``heading_text``)."""


AUTOLINKED = re.compile(r"(?<![A-Za-z])(https?|ftp)(?=://)|(?<![^\s*_~(])(www)(?=\.)", re.IGNORECASE)
"""The web addresses GitHub's Markdown links where it reads them in a line of text (its autolinks): ``http://``,
``https://`` and ``ftp://`` after anything but a letter, and ``www.`` at a line's start, after a space or after ``*``,
``_``, ``~`` or ``(``; each as the scheme or ``www`` before the ``:`` or ``.`` that ``markdown_name`` escapes, which it
then reads as written. Not the email addresses it links too (``mod@example.org``, ``mailto:`` and ``xmpp:`` ones),
which it links whatever is escaped in them."""


def markdown_name(name: str) -> str:
    """``name`` (a task's, a label's, a group's, as a user gave it) as Markdown shows it as written where faim puts it
    in its own text, beside its code spans: each line break (which would end a heading or a table's row) as a space;
    ``&``, ``<`` and ``>`` as HTML entities, so that a name that looks like HTML (``<script>``) or an entity
    (``&amp;``) is shown, not run or read as the character it names; and ``MARKDOWN_PUNCTUATION`` backslash-escaped,
    so that no backtick of it opens or closes a code span (`` ``<img>` `` is no code span to Markdown) and no ``*``
    or ``[`` of it makes emphasis or a link; and the ``:`` or ``.`` after a web address's start that GitHub links
    (``AUTOLINKED``: ``https://t.co``, ``www.reddit.com``), so that it is shown as written, not as a link (an email
    address GitHub links all the same)."""
    text = re.sub(r"\r\n|[\r\n]", " ", name)
    escaped = MARKDOWN_PUNCTUATION.sub(lambda found: found.group(1) or f"\\{found.group(2)}", text)
    escaped = AUTOLINKED.sub(lambda found: f"{found.group()}\\", escaped)
    return html.escape(escaped, quote=False)


def markdown_text(text: str) -> str:
    """``text``, written as plain text (a name, or faim's words with no Markdown of their own), as Markdown shows it
    in a heading or a paragraph: ``markdown_name``, then ``left_to_right`` (where it ends a heading,
    ``heading_text``)."""
    return left_to_right(markdown_name(text))


HEADING_END = re.compile(r"(?:^|(?<=[ \t]))#+(?=[ \t]*$)")
"""A run of ``#`` that Markdown reads as a heading's closing sequence where it ends the heading: after a space or a
tab, or the whole of its text (``## hate #`` is a heading of ``hate``, ``## #`` an empty one), spaces alone after it."""


def heading_text(text: str) -> str:
    """``text`` as ``markdown_text`` writes it, where it ends a Markdown heading (``## {text}``): a run of ``#`` ending
    it (``HEADING_END``) backslash-escaped too, so that it is shown, not read as the heading's end."""
    return HEADING_END.sub(lambda found: "\\#" * len(found.group()), markdown_text(text))


class Markdown(str):
    """Text already written as Markdown: faim's own (a recipe's name as code, ``model_name``; words in emphasis), any
    name of a user's in it put there by ``markdown_name``. ``markdown_cell`` leaves its Markdown as it is."""


def markdown_cell(cell: str) -> str:
    """``cell`` as a Markdown table's cell shows it, its direction set by ``left_to_right``: a ``Markdown`` cell's
    Markdown as it is (a recipe's name as code too, which would otherwise turn its row right to left), any other cell
    as ``markdown_text`` shows it (its ``|``, which would end the row, escaped)."""
    return left_to_right(cell if isinstance(cell, Markdown) else markdown_name(cell))


LINK_BREAKING = re.compile(r"[\s()<>\\%#?\x00-\x1f\x7f]")
"""What ends or breaks a Markdown link's destination written bare (``![a](b c.png)`` is no image): white space,
parentheses, angle brackets, a backslash, control characters, ``%``, which a renderer reads as the start of an
escape, and ``#`` and ``?``, which begin a fragment or a query (``![a](#hate_roc.png)`` links no file)."""


def markdown_image(alt: str, target: str) -> str:
    """A Markdown image of the file ``target`` (a relative path with forward slashes) described by ``alt``, each as a
    name of any script writes it (``hate speech (strict)_roc.png``): ``target`` with what ``LINK_BREAKING`` matches
    percent-encoded (``hate%20speech%20%28strict%29_roc.png``; letters of other scripts are left as they are, which
    renderers take), ``alt`` as ``markdown_name`` writes it, so that it is described as written, as its heading shows
    it (``a &amp; b`` too)."""
    shown = markdown_name(alt)
    return f"![{shown}]({LINK_BREAKING.sub(lambda match: quote(match.group()), target)})"


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table with padded columns for a console; the first column is left-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(header), "  ".join("-" * width for width in widths), *(line(row) for row in rows)])


def run_time(generated_at: str) -> str:
    """A run's ISO time to the minute (``2026-11-24 19:55``): what tells two runs of one day apart in a mark."""
    return generated_at[:16].replace("T", " ")


def earlier_mark(entry: dict[str, Any]) -> str:
    """`` (earlier run, DATE TIME)`` for an entry a ``--merge`` kept from an earlier run, else nothing."""
    return f" (earlier run, {run_time(entry['earlier_run'])})" if entry.get("earlier_run") else ""


def model_name(row: dict[str, Any]) -> Markdown:
    """A row's model as a table cell: a recipe's name as code (``markdown_code``), a baseline's in words (a row
    without a ``kind``, such as a held-out, probe or language row, is a recipe's)."""
    return markdown_code(row["name"]) if row.get("kind", "recipe") == "recipe" else Markdown(markdown_name(row["name"]))


def markdown_code(text: str) -> Markdown:
    """``text`` as a code span in a table's cell: ``code_span`` of it with its ``|`` escaped, which would end the row
    (GitHub's tables read ``\\|`` inside a code span as ``|``)."""
    return Markdown(code_span(text.replace("|", "\\|")))


def code_span(text: str) -> str:
    """``text`` (a path, a name) as a Markdown code span shows it as written: between backtick runs longer than any
    inside it, so that none of its own closes the span, a space inside each where it begins or ends with a backtick
    (which would join the run), its line breaks as spaces (which would end a heading or a table's row)."""
    shown = re.sub(r"\r\n|[\r\n]", " ", text)
    fence = "`" * (max(map(len, re.findall("`+", shown)), default=0) + 1)
    space = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{space}{shown}{space}{fence}"


def model_cell(row: dict[str, Any]) -> Markdown:
    """``model_name``, marked where a ``--merge`` kept the row from an earlier run (``earlier_mark``): every table
    that names a row's model says which run measured it."""
    return Markdown(model_name(row) + earlier_mark(row))
