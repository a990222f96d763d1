"""Explanations written for people and programs: one JSON per post, a PNG heat map per picture and task, and an
``index.html`` showing each post's element shares as bars, the tokens of its text and of each comment highlighted
and its pictures under their heat maps (red: raises the task's score; blue: lowers it). A post that could not be read
is listed with its error, as ``faim score`` gives a row's."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from faim.data.elements import PostError
from faim.explain.attribute import Explanation, TaskExplanation, TokenReading, element_label
from faim.folders import LISTING, check_replaceable, names_apart, replacing
from faim.preprocess.e5_pieces import MARKER

PAGE_HEAD = '<!doctype html><html><head><meta charset="utf-8"><title>faim explanations</title>'
"""How every report's ``index.html`` starts, those written before reports held ``LISTING`` too."""

POST_FILE = re.compile(r"\d{4,}-[A-Za-z0-9_-]+\.(json|png)")
"""The name of a file a report writes for a post: its ``file_stem``, then its JSON's or a picture's extension."""

DISPLAY = 224
"""Side, in CSS pixels, pictures are shown at."""


def safe_name(text: str) -> str:
    """``text`` with anything but letters, digits, ``-`` and ``_`` dropped, for a file name."""
    return re.sub(r"[^A-Za-z0-9_-]+", "", text)


def file_stem(number: int, post_id: str) -> str:
    """A file name for a post: its position and its id made safe (``safe_name``)."""
    return f"{number:04d}-{safe_name(post_id)[:40] or 'post'}"


PART_LENGTH = 100
"""The most characters of a task's name its heat maps' file names keep (``task_parts``), a post's ``file_stem``, the
picture's number and the rest beside it well within the 255 bytes a file's name may take."""


def task_parts(tasks: Sequence[str]) -> dict[str, str]:
    """Each task's part of its heat maps' file names: its name made safe (``safe_name``), ``task`` where nothing is
    left of it (a name in another script), set apart from the others' (``faim.folders.names_apart``: ``hate!``
    beside ``hate?``, ``hate`` beside ``Hate``, one file where file names are told apart regardless of case, as on
    macOS and Windows) within ``PART_LENGTH`` characters, so that no task's heat map takes another's file. A task
    whose name is safe as it is keeps it, whatever other tasks' names come to (``task`` beside tasks in Arabic)."""
    bases = {task: safe_name(task) or "task" for task in tasks}
    parts = names_apart(dict(sorted(bases.items(), key=lambda item: item[0] != item[1])), limit=PART_LENGTH)
    return {task: parts[task] for task in tasks}


def heat_overlay(picture: np.ndarray, heat: np.ndarray) -> Image.Image:
    """``picture`` ``[H, W, 3]``, in grey so its own colours do not read as heat, with ``heat`` ``[H, W]`` laid over
    it: red where positive, blue where negative, opaque in proportion to the magnitude (scaled by the largest)."""
    picture = np.repeat(picture.astype(np.float32).mean(-1, keepdims=True), 3, axis=-1)
    scale = float(np.abs(heat).max()) or 1.0
    strength = np.clip(np.abs(heat) / scale, 0, 1)[..., None] * 0.7
    colour = np.where(heat[..., None] >= 0, np.array([220, 20, 20]), np.array([20, 60, 220]))
    blended = picture.astype(np.float32) * (1 - strength) + colour * strength
    return Image.fromarray(blended.astype(np.uint8))


def to_json(explanation: Explanation, heat_maps: dict[str, list[str]]) -> dict[str, Any]:
    """The JSON record of one post (``heat_maps``: task → file names of its pictures' heat maps)."""
    return {
        "id": explanation.post_id,
        "notes": explanation.notes,
        "tasks": [
            {
                "task": task.task,
                "label": task.label,
                "probability": task.probability,
                "shares": [vars(share) for share in task.shares],
                "tokens": reading_records(task.tokens),
                "comments": [reading_records(readings) for readings in task.comments],
                "pictures": [
                    {"index": i, "heat_map": name, "heat": heat.round(6).tolist()}
                    for i, (name, heat) in enumerate(zip(heat_maps[task.task], task.pictures))
                ],
            }
            for task in explanation.tasks
        ],
    }


def reading_records(readings: list[TokenReading]) -> list[dict[str, Any]]:
    """A text element's readings as JSON records: ``{"reader", "tokens": [{"token", "attribution"}]}`` each."""
    return [
        {"reader": reading.reader, "tokens": [{"token": token, "attribution": a} for token, a in reading.tokens]}
        for reading in readings
    ]


def token_html(tokens: list[tuple[str, float]]) -> str:
    """Tokens as spans shaded by their attribution (red positive, blue negative), the pieces of a word joined: a
    WordPiece piece marked ``##`` continues the word before it; where pieces mark the start of a word with ``▁``
    (SentencePiece), a piece without the mark does, and the mark alone shows as a space."""
    scale = max((abs(a) for _, a in tokens), default=0.0) or 1.0
    starts_marked = any(token.startswith(MARKER) for token, _ in tokens)
    spans = []
    for token, attribution in tokens:
        alpha = min(1.0, abs(attribution) / scale) * 0.8
        colour = f"rgba(220,20,20,{alpha:.2f})" if attribution >= 0 else f"rgba(20,60,220,{alpha:.2f})"
        if token.startswith("##"):
            piece, gap = token[2:], ""
        elif token == MARKER:  # a word start alone, before characters no piece starts a word with: a shaded space
            piece, gap = "\u00a0", ""
        elif starts_marked:
            piece, gap = token.removeprefix(MARKER), " " if token.startswith(MARKER) else ""
        else:
            piece, gap = token, " "
        spans.append(
            f'{gap}<span class="tok" style="background:{colour}" title="{attribution:+.4f}">{html.escape(piece)}</span>'
        )
    return "".join(spans).strip()


def readings_html(readings: list[TokenReading], css: str, name: str) -> str:
    """A paragraph of highlighted tokens per reading of a text element that has tokens, headed by ``name`` (a
    comment's) and, for a member of a stack, by the member's name; the tokens in a ``bdi`` element of their own, so
    that a text written right to left (Arabic, Hebrew) reads so, its punctuation and numbers where it writes them,
    beside the heading."""
    paragraphs = []
    for reading in readings:
        if reading.tokens:
            heading = " · ".join(filter(None, [name, reading.reader if reading.in_stack else ""]))
            label = f'<span class="name">{html.escape(heading)}</span> ' if heading else ""
            paragraphs.append(f'<p class="{css}">{label}<bdi>{token_html(reading.tokens)}</bdi></p>')
    return "".join(paragraphs)


def task_html(task: TaskExplanation, heat_maps: list[str]) -> str:
    bars = "".join(
        f'<div class="row"><span class="name">{html.escape(share.label)}</span>'
        f'<span class="bar {"pos" if share.contribution >= 0 else "neg"}" '
        f'style="width:{share.share * 100:.1f}%"></span>'
        f'<span class="val">{share.share:.0%} ({share.contribution:+.3f})</span></div>'
        for share in task.shares
    )
    tokens = readings_html(task.tokens, "text", "")
    tokens += "".join(
        readings_html(readings, "text comment", element_label("comments", slot, len(task.comments)))
        for slot, readings in enumerate(task.comments)
    )
    pictures = "".join(f'<img src="{name}" width="{DISPLAY}" alt="heat map">' for name in heat_maps)
    return (
        f'<div class="task"><h3><bdi>{html.escape(task.task)}</bdi>: <bdi>{html.escape(task.label)}</bdi> '
        f"<small>p = {task.probability:.3f}</small></h3>"
        f'<div class="shares">{bars}</div>{tokens}<div class="pictures">{pictures}</div></div>'
    )


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }
.post { border: 1px solid #ccc; border-radius: 6px; padding: 1em 1.5em; margin-bottom: 1.5em; }
.row { display: flex; align-items: center; gap: 0.6em; margin: 0.2em 0; }
.name { width: 8em; } .val { color: #555; font-size: 0.9em; }
.bar { height: 0.9em; display: inline-block; min-width: 2px; max-width: 50%; }
.bar.pos { background: #d33; } .bar.neg { background: #36c; }
.shares { width: 100%; } .text { font-size: 1.15em; line-height: 1.8; }
.comment { font-size: 1em; margin-left: 1.5em; } .text .name { color: #555; font-size: 0.85em; }
.tok { padding: 0.1em 0.15em; border-radius: 3px; }
.pictures img, .originals img { margin: 0.3em 0.5em 0.3em 0; image-rendering: pixelated; border: 1px solid #ddd; }
.notes { color: #a60; font-size: 0.9em; } .error { color: #b00; }
"""


def write_report(posts: Sequence[Explanation | PostError], out: str | Path) -> Path:
    """Write every explained post's JSON and heat maps, ``index.html`` and ``faim-explanations.json`` (written last)
    as the folder ``out``, replacing an earlier report there; returns the page's path. ``posts``: each post's
    explanation, or the error of one that could not be read, in the order the page and the listing give them.

    Raises:
        FileExistsError: If ``out`` holds anything but an earlier report (``faim.folders.check_replaceable``).
    """
    target = Path(out)
    check_report_folder(target)
    with replacing(target, ".faim-explain-") as root:
        write_files(posts, root)
    return target / "index.html"


def check_report_folder(target: Path) -> None:
    """Refuse a ``target`` a report must not replace: anything but an absent or empty folder, a report (it holds
    ``LISTING``), or one written before reports held it (``earlier_report``).

    Raises:
        NotADirectoryError: When ``target`` is a file or lies inside one (``faim.folders.check_replaceable``).
        FileExistsError: Naming ``target`` (``faim.folders.check_replaceable``).
    """
    if not earlier_report(target):
        check_replaceable(target, LISTING)


def earlier_report(target: Path) -> bool:
    """Whether ``target`` is a report written before reports held ``LISTING``: a folder whose ``index.html`` starts
    as a report's page does (``PAGE_HEAD``) and whose other files are all named as a report names a post's files
    (``file_stem``, then ``.json`` or a picture's ``.png``)."""
    page = target / "index.html"
    if target.is_symlink() or not page.is_file():
        return False
    with page.open("rb") as file:
        if file.read(len(PAGE_HEAD.encode())) != PAGE_HEAD.encode():
            return False
    return all(path == page or (path.is_file() and POST_FILE.fullmatch(path.name)) for path in target.iterdir())


def write_files(posts: Sequence[Explanation | PostError], root: Path) -> None:
    """Write the report's files into the folder ``root``, its listing last."""
    sections = []
    listing = []
    number = 0  # the explained posts', which their files are named by
    for explanation in posts:
        if isinstance(explanation, PostError):
            error = explanation
            listing.append({"post": error.post_id, "error": str(error), "error_kind": error.kind})
            sections.append(
                f'<div class="post"><h2>post <bdi>{html.escape(error.post_id)}</bdi></h2>'
                f'<p class="error">not explained: {html.escape(str(error))}</p></div>'
            )
            continue
        stem = file_stem(number, explanation.post_id)
        number += 1
        originals = []
        for index, picture in enumerate(explanation.pictures):
            name = f"{stem}-picture{index}.png"
            Image.fromarray(picture).save(root / name)
            originals.append(name)
        heat_maps: dict[str, list[str]] = {}
        parts = task_parts([task.task for task in explanation.tasks])
        for task in explanation.tasks:
            heat_maps[task.task] = []
            for index, heat in enumerate(task.pictures):
                name = f"{stem}-{parts[task.task]}-picture{index}-heat.png"
                heat_overlay(explanation.pictures[index], heat).save(root / name)
                heat_maps[task.task].append(name)
        record = to_json(explanation, heat_maps)
        (root / f"{stem}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        listing.append({"post": explanation.post_id, "explanation": f"{stem}.json"})
        notes = "".join(f'<p class="notes">{html.escape(note)}</p>' for note in explanation.notes)
        shown = "".join(f'<img src="{name}" width="{DISPLAY}" alt="picture">' for name in originals)
        tasks = "".join(task_html(task, heat_maps[task.task]) for task in explanation.tasks)
        sections.append(
            f'<div class="post"><h2>post <bdi>{html.escape(explanation.post_id)}</bdi></h2>{notes}'
            f'<div class="originals">{shown}</div>{tasks}</div>'
        )
    page = (
        f"{PAGE_HEAD}<style>{STYLE}</style></head><body><h1>Why each post got its scores</h1>"
        "<p>Bars: each element's share of the task's logit (integrated gradients; red raises the score, blue "
        "lowers it). Text: each token's attribution. Pictures: the picture as the model saw it, then per task the "
        f"change in the logit when each region is hidden.</p>{''.join(sections)}</body></html>"
    )
    (root / "index.html").write_text(page, encoding="utf-8")
    files = sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())
    (root / LISTING).write_text(json.dumps({"posts": listing, "files": files}, indent=1), encoding="utf-8")
