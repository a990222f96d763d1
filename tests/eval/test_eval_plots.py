"""Plots write non-empty PNG files, also for degenerate samples, without touching pyplot."""

from __future__ import annotations

import contextlib
import io
import sys
import unicodedata
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from faim.data.targets import TaskSpec
from faim.eval import plot_binary, plot_multiclass, plots
from faim.folders import WINDOWS_DEVICES

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000


def test_plot_binary_writes_three_pngs(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    prob = rng.uniform(size=300)
    y = (rng.uniform(size=300) < prob).astype(int)
    paths = plot_binary(y, prob, tmp_path / "plots", "hate")
    assert [p.name for p in paths] == ["hate_roc.png", "hate_pr.png", "hate_calibration.png"]
    for path in paths:
        _assert_png(path)


def test_a_plot_stopped_part_way_leaves_the_earlier_one_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    prob = rng.uniform(size=300)
    y = (rng.uniform(size=300) < prob).astype(int)
    earlier = {path: path.read_bytes() for path in plot_binary(y, prob, tmp_path, "hate")}
    save = Image.Image.save

    def stopped(self: Image.Image, file: Any, *args: Any, **kwargs: Any) -> None:
        whole = io.BytesIO()  # then stopped part way through writing it: Ctrl-C, SIGTERM, a full disk
        save(self, whole, *args, **kwargs)
        with open(file, "wb") if isinstance(file, (str, Path)) else contextlib.nullcontext(file) as handle:
            handle.write(whole.getvalue()[:1000])
        raise KeyboardInterrupt

    monkeypatch.setattr(Image.Image, "save", stopped)
    with pytest.raises(KeyboardInterrupt):
        plot_binary(y, 1 - prob, tmp_path, "hate")
    assert {path: path.read_bytes() for path in tmp_path.iterdir()} == earlier


def test_reliability_diagram_takes_the_groups_that_share_outcomes(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    prob = rng.uniform(size=300)
    y = (rng.uniform(size=300) < prob).astype(int)
    alone = plot_binary(y, prob, tmp_path / "alone", "t")[2]
    grouped = plot_binary(y, prob, tmp_path / "grouped", "t", groups=np.arange(300) // 30)[2]
    _assert_png(grouped)
    assert grouped.read_bytes() != alone.read_bytes()  # wider bars and range when ten groups share outcomes


def test_plot_binary_single_class_does_not_crash(tmp_path: Path) -> None:
    paths = plot_binary(np.zeros(10, dtype=int), np.linspace(0, 1, 10), tmp_path, "flat")
    for path in paths:
        _assert_png(path)


def test_plot_multiclass_writes_roc_and_calibration(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(200, 3))
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = rng.integers(0, 2, size=200)  # class "hate" never occurs: its curve is marked undefined
    paths = plot_multiclass(y, prob, ["none", "offensive", "hate"], tmp_path, "davidson")
    assert [p.name for p in paths] == ["davidson_roc.png", "davidson_calibration.png"]
    for path in paths:
        _assert_png(path)


def test_names_of_any_script_are_drawn_in_a_font_holding_them_or_written_as_code_points(tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "FALLBACK_FONTS", ("STIXGeneral",))  # matplotlib's own: it holds ⌚, DejaVu Sans not
    from matplotlib import font_manager

    # each family's upright face listed before its italic and bold ones, which hold no ⌚: the plain face draws the text
    faces = font_manager.fontManager.ttflist
    upright_first = sorted(faces, key=lambda font: (font.style, font.weight) != ("normal", 400))
    monkeypatch.setattr(font_manager.fontManager, "ttflist", upright_first)
    plots.plot_fonts.cache_clear()
    rng = np.random.default_rng(1)
    prob = rng.dirichlet(np.ones(4), size=200)
    labels = ["⌚ late", "仇恨", "رياضة", "खेल"]  # Han, held by no font here; Arabic; Devanagari, its vowel a mark
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_multiclass(rng.integers(0, 4, size=200), prob, labels, tmp_path, "类别")
    plots.plot_fonts.cache_clear()
    said = [str(warning.message) for warning in caught]
    assert not [line for line in said if "missing from font" in line]  # matplotlib's, of each glyph drawn as a box
    (undrawn,) = [line for line in said if line.startswith("类别_roc.png: drawn with code points")]
    assert "'仇恨 (AUROC" in undrawn and "'رياضة (AUROC" in undrawn and "'खेल (AUROC" in undrawn
    assert "⌚" not in undrawn and "(DejaVu Sans, STIXGeneral)" in undrawn
    every = frozenset(range(0x110000))  # a font holding every character still draws Arabic unjoined, out of order
    assert plots.drawn_text("仇恨 ⌚\n(n)", every) == "仇恨 ⌚\n(n)"
    assert plots.drawn_text("رياضة (n)", every) == r"\u0631\u064a\u0627\u0636\u0629 (n)"
    assert plots.drawn_text("खेल café", every) == r"\u0916\u0947\u0932 café"  # the word of a vowel sign, whole


def test_a_task_named_with_a_path_separator_is_plotted_into_the_folder_given(tmp_path: Path) -> None:
    y, prob = np.array([0, 1, 0, 1]), np.array([0.2, 0.7, 0.4, 0.9])
    paths = plot_binary(y, prob, tmp_path, "hate/offensive")  # it stopped faim eval: no folder hate to write into
    assert [path.name for path in paths] == [f"hate_offensive_{kind}.png" for kind in ("roc", "pr", "calibration")]
    assert all(path.parent == tmp_path for path in paths)
    assert plots.file_name('仇恨 <a>:"b"|c?*\\d') == "仇恨 _a___b__c___d.png"


def test_plots_do_not_use_pyplot(tmp_path: Path) -> None:
    plot_binary(np.array([0, 1, 0, 1]), np.array([0.2, 0.8, 0.4, 0.6]), tmp_path, "t")
    pyplot = sys.modules.get("matplotlib.pyplot")
    assert pyplot is None or not pyplot.get_fignums()


def test_plot_binary_rejects_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_binary(np.array([]), np.array([]), tmp_path, "t")


def curve_row(labels: int) -> dict[str, float]:
    """A learning-curve row (``faim.eval.recalibration.learning_curve``) fitted on ``labels`` posts."""
    return {"labels": labels, "ece_mean": 0.1, "ece_sd": 0.01, "macro_f1_mean": 0.7, "macro_f1_sd": 0.02,
            "ece_if_calibrated_low": 0.02, "ece_if_calibrated_high": 0.08}  # fmt: skip


@pytest.mark.parametrize(("sizes", "head_sizes"), [((50, 100), ()), ((3, 50, 200, 500), (50, 200, 500))])
def test_the_learning_curve_is_ticked_at_the_sizes_drawn_labelled_as_numbers(
    sizes: tuple[int, ...], head_sizes: tuple[int, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = []
    square_figure = plots.square_figure
    monkeypatch.setattr(plots, "square_figure", lambda: made.append(square_figure()) or made[-1])
    as_is = {"ece": 0.2, "macro_f1": 0.6}
    path = plots.plot_learning_curve("hate", [curve_row(n) for n in sizes], as_is, tmp_path,
                                     [curve_row(n) for n in head_sizes])  # fmt: skip
    _assert_png(path)
    ((fig, ax),) = made
    fig.canvas.draw()
    low, high = ax.get_xlim()
    ticks = [*ax.get_xticklabels(), *ax.get_xticklabels(minor=True)]
    shown = [tick.get_text() for tick in ticks if tick.get_text() and low <= tick.get_position()[0] <= high]
    assert shown == [str(n) for n in sorted({*sizes, *head_sizes})]


def test_tasks_named_too_long_for_a_file_are_plotted_into_files_of_names_cut_short_and_apart(tmp_path: Path) -> None:
    tasks = ["仇" * 90, "仇" * 91, "h" * 300]  # 270, 273 and 300 bytes: no file's name may take more than 255
    names = plots.plot_names(tasks)
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 20), rng.random(20)
    written = [path for task in tasks for path in plot_binary(y, p, tmp_path, names[task])]
    written.append(
        plots.plot_learning_curve(tasks[0], [], {"ece": 0.1, "macro_f1": 0.5}, tmp_path, named=names[tasks[0]])
    )
    assert len({path.name.casefold() for path in written}) == len(written) == 10
    assert all(path.is_file() and len(path.name.encode()) <= 255 for path in written)


def test_tasks_whose_names_differ_in_how_their_accents_are_written_get_plots_of_their_own() -> None:
    # café composed and café with a combining accent: one file on macOS, which compares names so
    tasks = ["caf\u00e9", "cafe\u0301", "CAFE\u0301"]
    names = plots.plot_names(tasks)
    shown = {unicodedata.normalize("NFC", name).casefold() for name in names.values()}
    assert len(shown) == 3 and names["caf\u00e9"] == "caf\u00e9"


def test_a_models_tasks_are_numbered_among_the_tasks_plotted_alone() -> None:
    # a multilabel Hate, which has no plots, took hate_roc.png from the binary hate beside it (hate-2_roc.png)
    tasks = [
        TaskSpec("Hate", "multilabel", ("slur", "threat")),
        TaskSpec("hate", "binary", ("no", "yes")),
        TaskSpec("HATE", "multiclass", ("a", "b", "c")),
    ]
    assert plots.model_plot_names(tasks) == {"hate": "hate", "HATE": "HATE-2"}


def test_tasks_named_as_a_windows_device_before_a_dot_are_plotted_into_files_windows_can_write(tmp_path: Path) -> None:
    # con.hate_roc.png is the device CON to Windows, as con.txt is; con_roc.png is a file
    tasks = ["con.hate", "NUL.v2", "lpt1.x", "con", "aux_harm"]
    names = plots.plot_names(tasks)
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 20), rng.random(20)
    written = [path.name for task in tasks for path in plot_binary(y, p, tmp_path, names[task])]
    assert not [name for name in written if WINDOWS_DEVICES.fullmatch(name)]
    assert names == {
        "con.hate": "con_.hate",
        "NUL.v2": "NUL_.v2",
        "lpt1.x": "lpt1_.x",
        "con": "con",
        "aux_harm": "aux_harm",
    }
