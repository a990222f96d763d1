"""Evaluation plots: ROC, precision-recall and reliability diagrams, written as PNG files.

Figures are built with the object-oriented API on an Agg canvas (``Figure`` + ``FigureCanvasAgg``),
never through ``pyplot``: no display is opened, the global backend is left alone, and no figure is
registered anywhere, so each one is freed once written. Undefined curves (a sample with one class)
give an annotated empty panel, not an error.

A task's or a class's name may be of any script. Each text of a figure is drawn in matplotlib's DejaVu Sans, falling
back, character by character, to the first of ``FALLBACK_FONTS`` matplotlib finds here that holds it (a font of Han,
kana and Hangul, which DejaVu Sans lacks); a character none of them holds, or of a script matplotlib cannot draw as it
is read (written right to left, Arabic and Hebrew, whose letters it neither orders nor joins, or with marks set on or
joined to letters, Devanagari and the other Indic scripts), has its word written with code points (``\u4ec7``), as
``ascii`` writes them, and a warning names the file and the names so written (``save_figure``), in place of
matplotlib's warning of each glyph missing and a box drawn for it, alike for every character, which made two classes'
names look alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from faim.calibration.checks import as_binary_inputs, as_multiclass_inputs
from faim.eval.calibration import draw_calibrated, expected_calibration_error, reliability_bins
from faim.folders import NAME_BYTES, WINDOWS_DEVICES, names_apart, write_whole
from faim.notices import warn

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from faim.data.targets import TaskSpec

_DPI = 120

FONT = "DejaVu Sans"
"""The font figures are drawn in, matplotlib's own (it ships with it)."""
FALLBACK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Noto Sans CJK KR",
    "Noto Sans CJK TC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "Microsoft YaHei",
    "Yu Gothic",
    "Malgun Gothic",
    "PingFang SC",
    "Hiragino Sans",
    "Arial Unicode MS",
    "Noto Sans",
)
"""Fonts holding what ``FONT`` lacks, as Linux distributions (Noto, WenQuanYi, Droid), Windows and macOS install them,
each drawn from where matplotlib finds it here (``plot_fonts``)."""
UNDRAWN_BIDI = ("R", "AL")
"""The bidirectional classes of letters written right to left (Hebrew; Arabic, Syriac, Thaana), which matplotlib
draws left to right, unjoined."""


def plot_binary(
    y_true: np.ndarray,
    prob: np.ndarray,
    out_dir: Path,
    prefix: str,
    bins: int = 15,
    groups: np.ndarray | None = None,
) -> list[Path]:
    """Write the ROC curve, the precision-recall curve and the reliability diagram of a binary task.

    Args:
        y_true: labels, 0/1 ``[N]``.
        prob: positive-class probabilities ``[N]``.
        out_dir: folder for the images, created if missing.
        prefix: file-name prefix, typically the task name.
        bins: number of equal-width bins of the reliability diagram.
        groups: optional group id per row of posts that share their outcome (see
            :func:`faim.eval.calibration.draw_calibrated`), for the reliability diagram's consistency bars.

    Returns:
        Paths of ``<prefix>_roc.png``, ``<prefix>_pr.png`` and ``<prefix>_calibration.png`` (``file_name``).

    Raises:
        ValueError: on an empty sample, mismatched shapes, labels other than 0/1 or probabilities
            outside [0, 1].
    """
    # heavy: loaded when first used
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

    y, p = as_binary_inputs(y_true, prob)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    both_classes = 0 < y.sum() < y.size

    roc_fig, ax = square_figure()
    _roc_axes(ax)
    if both_classes:
        fpr, tpr, _ = roc_curve(y, p)
        ax.plot(fpr, tpr, lw=2)
        ax.set_title(f"ROC: AUROC {roc_auc_score(y, p):.3f}")
    else:
        _undefined(ax, "ROC")

    pr_fig, ax = square_figure()
    ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1.02))
    if both_classes:
        precision, recall, _ = precision_recall_curve(y, p)
        ax.step(recall, precision, where="post", lw=2)
        ax.axhline(y.mean(), color="grey", ls="--", lw=1, label=f"prevalence {y.mean():.3f}")
        ax.legend(loc="lower left")
        ax.set_title(f"Precision-recall: AP {average_precision_score(y, p):.3f}")
    else:
        _undefined(ax, "Precision-recall")

    cal_fig = _reliability_figure(p, y, bins, groups, "predicted probability (positive class)", "fraction positive")
    paths = [out_dir / file_name(f"{prefix}_{kind}") for kind in ("roc", "pr", "calibration")]
    for fig, path in zip((roc_fig, pr_fig, cal_fig), paths, strict=True):
        save_figure(fig, path)
    return paths


def plot_multiclass(
    y_true: np.ndarray,
    prob: np.ndarray,
    labels: Sequence[str],
    out_dir: Path,
    prefix: str,
    bins: int = 15,
    groups: np.ndarray | None = None,
) -> list[Path]:
    """Write one-vs-rest ROC curves of every class in one figure and the max-prob reliability diagram.

    Args:
        y_true: class indices ``[N]`` into ``labels``.
        prob: class probabilities ``[N, C]``.
        labels: class names for the legend.
        out_dir: folder for the images, created if missing.
        prefix: file-name prefix, typically the task name.
        bins: number of equal-width bins of the reliability diagram.
        groups: as in :func:`plot_binary`.

    Returns:
        Paths of ``<prefix>_roc.png`` and ``<prefix>_calibration.png`` (``file_name``).

    Raises:
        ValueError: on an empty sample, shapes other than ``[N]`` / ``[N, C]``, class indices outside
            ``[0, C)`` or probabilities outside [0, 1].
    """
    from sklearn.metrics import roc_auc_score, roc_curve  # heavy: loaded when first used

    y, p = as_multiclass_inputs(y_true, prob, labels)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    roc_fig, ax = square_figure()
    _roc_axes(ax)
    ax.set_title("One-vs-rest ROC")
    for c, label in enumerate(labels):
        positive = y == c
        if 0 < positive.sum() < y.size:
            fpr, tpr, _ = roc_curve(positive, p[:, c])
            ax.plot(fpr, tpr, lw=1.5, label=f"{label} (AUROC {roc_auc_score(positive, p[:, c]):.3f})")
        else:
            ax.plot([], [], label=f"{label} (undefined: one class)")
    ax.legend(loc="lower right", fontsize="small")

    pred = p.argmax(axis=1)
    cal_fig = _reliability_figure(p, pred == y, bins, groups, "confidence (max probability)", "accuracy")
    paths = [out_dir / file_name(f"{prefix}_{kind}") for kind in ("roc", "calibration")]
    for fig, path in zip((roc_fig, cal_fig), paths, strict=True):
        save_figure(fig, path)
    return paths


UNNAMEABLE = re.compile(r'[/\\<>:"|?*\x00-\x1f]')
"""What no file's name may hold on some system (a path separator; on Windows ``<>:"|?*`` and control characters)."""


def plot_names(tasks: Iterable[str]) -> dict[str, str]:
    """Each task's part of the file names of its plots (``file_name``): its name, each character ``UNNAMEABLE``
    matches written ``_``, and where an earlier task's is already that, or that in another case (``a:b`` beside
    ``a_b``, ``Hate`` beside ``hate``: one file on macOS and Windows), a number after it (``hate-2``), so that no
    task's plot takes another's file, and the plots of a task holding its name alone keep it (``names_apart``); a
    name too long for a file's (``NAME_BYTES``) beside the plot's kind is cut short; a name Windows keeps for a device
    before a dot (``con.hate``, whose ``con.hate_roc.png`` is the device ``CON`` to Windows: ``WINDOWS_DEVICES``)
    with ``_`` after the device's (``con_.hate``)."""
    bases = {task: device_apart(UNNAMEABLE.sub("_", task)) for task in tasks}
    return names_apart(bases, limit=NAME_BYTES - len("_calibration.png"))  # the most a plot adds, calibration_ too


def device_apart(base: str) -> str:
    """A task's part of its plots' file names, ``base``, with ``_`` after a name Windows keeps for a device that it
    begins with before a dot (``con.hate``: ``con_.hate``); a plot adds ``_`` and its kind after the part, so that a
    part of the device's name alone (``con``) names no device."""
    found = WINDOWS_DEVICES.fullmatch(base)
    return f"{found[1]}_{found[2]}" if found and found[2] else base


PLOTTED = ("binary", "multiclass")
"""The task types whose plots faim eval draws and whose learning curves faim calibrate draws."""


def model_plot_names(tasks: Iterable[TaskSpec]) -> dict[str, str]:
    """``plot_names`` of a model's ``tasks`` whose type is ``PLOTTED``: each the same whichever tasks a run's data
    labels, and none taken from a task with no plots (a multilabel ``Hate`` beside a binary ``hate``, whose plots
    keep ``hate_roc.png``)."""
    return plot_names(task.name for task in tasks if task.type in PLOTTED)


def file_name(stem: str) -> str:
    """The PNG file a plot named ``stem`` (a task's name and the plot's kind: ``hate/offensive_roc``) is written to:
    each character ``UNNAMEABLE`` matches written ``_`` (``hate_offensive_roc.png``), so that a task of any name is
    plotted into the report's folder, its letters of any script kept."""
    return f"{UNNAMEABLE.sub('_', stem)}.png"


def agg_figure(width: float, height: float) -> Figure:
    """An empty figure of ``width`` x ``height`` inches, with constrained layout, on an Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # heavy: loaded when a plot is first drawn
    from matplotlib.figure import Figure  # heavy: loaded when a plot is first drawn

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, path: Path) -> None:
    """Write ``fig`` to ``path`` as a PNG, each of its texts in ``plot_fonts``, written as ``drawn_text`` gives it;
    whole, or what ``path`` held before left as it was (``faim.folders.write_whole``).

    Warns:
        FaimWarning: Naming the file and each text holding what is written as its code points, and why.
    """
    from matplotlib.text import Text  # heavy: loaded when a plot is first drawn

    fonts, held = plot_fonts()
    undrawn = []
    for text in fig.findobj(Text):
        written = text.get_text()
        drawn = drawn_text(written, held)
        if drawn != unicodedata.normalize("NFC", written):
            undrawn.append(written)
        text.set_text(drawn)
        text.set_fontfamily(list(fonts))
    write_whole(path, lambda partial: fig.savefig(partial, dpi=_DPI, format="png"))  # stopped part way: as it was
    if undrawn:
        warn(
            f"{path.name}: drawn with code points (\\u...) where no font matplotlib finds here ({', '.join(fonts)}) "
            "holds a character, or it would draw one out of order or unjoined (right to left, or with marks set on "
            f"letters): {', '.join(map(repr, dict.fromkeys(undrawn)))}; the report's tables name them as written, "
            "and a font of faim.eval.plots.FALLBACK_FONTS draws the characters of other scripts"
        )


@cache
def plot_fonts() -> tuple[tuple[str, ...], frozenset[int]]:
    """The fonts figures are drawn in: ``FONT`` and those of ``FALLBACK_FONTS`` matplotlib finds here, in that order,
    and the characters (code points) they hold between them, as the file matplotlib draws each family's plain text
    from holds them (its upright face of normal weight, not the italic or bold one, which may hold fewer); read once."""
    from matplotlib import font_manager  # heavy: loaded when a plot is first drawn
    from matplotlib.ft2font import FT2Font  # heavy: loaded when a plot is first drawn

    families = {font.name for font in font_manager.fontManager.ttflist}
    files = {
        name: font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
        for name in (FONT, *FALLBACK_FONTS)
        if name in families
    }
    fonts = tuple(files)
    return fonts, frozenset().union(*(FT2Font(files[name]).get_charmap() for name in fonts))


def drawn_text(text: str, held: frozenset[int]) -> str:
    """``text`` (composed, NFC) as a figure draws it: each of its words (the text between spaces) holding a character
    not drawn as written (``drawn_as_written``) written with code points for every character that is not ASCII
    (``\\u4ec7``, as ``ascii`` writes them), so that no word is drawn part in letters and part in codes; the others as
    they are."""
    words = re.split(r"(\s+)", unicodedata.normalize("NFC", text))
    return "".join(
        word
        if word.isspace() or all(drawn_as_written(character, held) for character in word)
        else word.encode("ascii", "backslashreplace").decode()
        for word in words
    )


def drawn_as_written(character: str, held: frozenset[int]) -> bool:
    """Whether a figure draws ``character`` as it is written: it is among ``held`` (code points), is no mark set on a
    letter (a combining mark, as Indic vowel signs and viramas are) and is not written right to left
    (``UNDRAWN_BIDI``)."""
    kind = unicodedata.category(character)[0]
    return ord(character) in held and kind != "M" and unicodedata.bidirectional(character) not in UNDRAWN_BIDI


def square_figure() -> tuple[Figure, Axes]:
    """A square single-axes figure on an Agg canvas."""
    fig = agg_figure(5, 5)
    return fig, fig.add_subplot()


def _roc_axes(ax: Axes) -> None:
    """Label ROC axes and draw the chance diagonal."""
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=1)
    ax.set(xlabel="false positive rate", ylabel="true positive rate", xlim=(0, 1), ylim=(0, 1.02))


def _size_ticks(ax: Axes, sizes: Sequence[int]) -> None:
    """Tick a log-scaled x axis at each of ``sizes`` (numbers of posts), labelled as the numbers they are (``50``,
    not ``5×10¹``), and nowhere else: no minor tick, which the log scale would label between them."""
    ax.set_xticks(sizes, labels=[str(size) for size in sizes])
    ax.set_xticks([], minor=True)


def _undefined(ax: Axes, title: str) -> None:
    """Mark a curve that one class alone cannot define."""
    ax.set_title(f"{title}: undefined")
    ax.text(0.5, 0.5, "only one class present", ha="center", va="center", transform=ax.transAxes)


def _reliability_figure(
    prob: np.ndarray, outcome: np.ndarray, bins: int, groups: np.ndarray | None, xlabel: str, ylabel: str
) -> Figure:
    """Reliability diagram (observed frequency per confidence bin, with the range a calibrated model would show in
    each bin) above a histogram of confidences; ``prob`` is ``[N]`` (binary) or ``[N, C]`` (the max is the
    confidence)."""
    confidence = prob if prob.ndim == 1 else prob.max(axis=1)
    rb = reliability_bins(confidence, outcome, bins)
    ece = expected_calibration_error(confidence, outcome, bins)
    drawn = draw_calibrated(prob, groups, bins)  # the same draws as the report's ece_if_calibrated range
    bar_low, bar_high = drawn.frequency_range()
    ece_low, ece_high = drawn.ece_range()
    fig = agg_figure(5, 6)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    width = np.diff(rb.edges)
    filled = rb.counts > 0
    top.bar(
        rb.edges[:-1],
        np.where(filled, rb.frequency, 0.0),
        width=width,
        align="edge",
        edgecolor="black",
        alpha=0.7,
        label="observed",
    )
    top.plot(rb.confidence[filled], rb.frequency[filled], "o", color="black", ms=3, label="bin mean confidence")
    top.vlines(
        rb.confidence[filled],
        bar_low[filled],
        bar_high[filled],
        color="tab:red",
        lw=2,
        label="95 % range if calibrated",
    )
    top.plot([0, 1], [0, 1], color="grey", ls="--", lw=1, label="perfect calibration")
    title = f"Reliability: ECE {ece:.3f}\n(a calibrated model here: {ece_low:.3f}–{ece_high:.3f})"
    top.set(ylabel=ylabel, xlim=(0, 1), ylim=(0, 1.02), title=title)
    top.legend(loc="upper left", fontsize="small")
    bottom.bar(rb.edges[:-1], rb.counts, width=width, align="edge", edgecolor="black", color="tab:grey")
    bottom.set(xlabel=xlabel, ylabel="count")
    return fig


def plot_learning_curve(
    task: str,
    curve: Sequence[dict[str, float]],
    as_is: dict[str, Any],
    out_dir: Path,
    head_curve: Sequence[dict[str, float]] = (),
    named: str | None = None,
) -> Path:
    """ECE and macro-F1 (mean ± standard deviation over draws) against the labelled posts a calibration was fitted
    on (``faim.eval.recalibration.learning_curve``), with the head corrected first where ``head_curve`` is given
    (square markers, dotted), the ECE range of a calibrated model on the same posts as a band, the calibration as it
    was as dashed lines; written to ``calibration_<named>.png`` (``file_name``; ``named``: the task's part of its
    plots' file names, ``plot_names``; by default its name)."""
    fig, ax = square_figure()
    sizes = [row["labels"] for row in curve]
    for metric, color in (("ece", "tab:red"), ("macro_f1", "tab:blue")):
        for rows, marker, line, how in ((curve, "o", "-", "fitted"), (head_curve, "s", ":", "head corrected")):
            if rows:
                means, errors = [row[f"{metric}_mean"] for row in rows], [row[f"{metric}_sd"] for row in rows]
                ax.errorbar([row["labels"] for row in rows], means, yerr=errors, marker=marker, ls=line, color=color,
                            capsize=3, label=f"{metric}, {how}")  # fmt: skip
        ax.axhline(as_is[metric], color=color, ls="--", lw=1, label=f"{metric}, as it was")
    lows, highs = ([row[name] for row in curve] for name in ("ece_if_calibrated_low", "ece_if_calibrated_high"))
    ax.fill_between(sizes, lows, highs, color="tab:red", alpha=0.15, label="ECE of a calibrated model there")
    ax.set(xscale="log", xlabel="labelled posts the calibration is fitted on", title=f"{task}: recalibration")
    _size_ticks(ax, sorted({row["labels"] for row in (*curve, *head_curve)}))
    ax.legend(fontsize=8)
    path = Path(out_dir) / file_name(f"calibration_{task if named is None else named}")
    save_figure(fig, path)
    return path
