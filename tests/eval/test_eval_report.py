"""Report files: JSON round trip with NaN as null, Markdown tables, console table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from faim.eval import (
    Results,
    binary_metrics,
    format_table,
    multiclass_metrics,
    multilabel_metrics,
    plot_binary,
    write_report,
)
from faim.eval.report import WRITTEN, replace_written
from faim.notices import FaimWarning


def _results(tmp_path: Path) -> Results:
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    prob = np.array([0.1, 0.9, 0.3, 0.6, 0.8, 0.45, 0.35, 0.2])
    plots = plot_binary(y, prob, tmp_path / "out", "hate")
    three = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
    return {
        "model": "runs/memes",
        "data": "dev.jsonl",
        "split": "dev",
        "tasks": {
            "hate": {
                "type": "binary",
                "metrics": binary_metrics(y, prob, threshold=0.5),
                "slices": {"en": binary_metrics(y[:5], prob[:5], threshold=0.5), "es|mx": {"n": 3}},
                "ablations": {
                    "without_image": binary_metrics(y, np.roll(prob, 1), threshold=0.5),
                    "without_text": binary_metrics(np.zeros(8, dtype=int), prob, threshold=0.5),
                },
                "plots": plots,
            },
            "davidson": {
                "type": "multiclass",
                "metrics": multiclass_metrics(np.array([0, 1, 2, 1]), three, ["none", "offensive", "hate"]),
            },
        },
    }


def test_json_round_trips_with_nan_as_null(tmp_path: Path) -> None:
    results = _results(tmp_path)
    paths = write_report(results, tmp_path / "out")
    loaded = json.loads(paths["json"].read_text())
    without_text = loaded["tasks"]["hate"]["ablations"]["without_text"]
    assert without_text["auroc"] is None  # NaN: one class only
    assert loaded["tasks"]["hate"]["metrics"] == pytest.approx(results["tasks"]["hate"]["metrics"])
    assert loaded["tasks"]["hate"]["plots"] == [str(p) for p in results["tasks"]["hate"]["plots"]]
    assert (loaded["model"], loaded["data"], loaded["split"]) == ("runs/memes", "dev.jsonl", "dev")
    # writing the loaded dict again gives the same file
    again = write_report(loaded, tmp_path / "again")
    assert json.loads(again["json"].read_text()) == loaded


def test_markdown_has_tasks_metrics_slices_ablations_and_images(tmp_path: Path) -> None:
    paths = write_report(_results(tmp_path), tmp_path / "out")
    md = paths["markdown"].read_text()
    for text in (
        "## hate (binary)",
        "## davidson (multiclass)",
        "| auroc |",
        "| average_precision |",
        "| macro_auroc |",
        "| f1/offensive |",
        "precision@recall=0.90",
        "### Slices",
        "### Ablations",
        "| metric | full | without_image | without_text |",
        "es\\|mx",
        "n/a",
        "![hate_roc.png](hate_roc.png)",
        "![hate_calibration.png](hate_calibration.png)",
    ):
        assert text in md, text
    ablation_row = next(line for line in md.splitlines() if line.startswith("| auroc | ") and "(" in line)
    assert "(-0." in ablation_row  # shuffled scores lose AUROC against the full model


def test_markdown_links_plots_relative_to_report(tmp_path: Path) -> None:
    paths = write_report(_results(tmp_path), tmp_path / "report")
    assert "](../out/hate_pr.png)" in paths["markdown"].read_text()


def test_the_plots_of_a_task_named_with_spaces_and_brackets_are_linked_as_images(tmp_path: Path) -> None:
    results = _results(tmp_path)
    task = results["tasks"]["hate speech (strict)"] = results["tasks"].pop("hate")
    y, prob = np.array([0, 1, 0, 1]), np.array([0.2, 0.7, 0.4, 0.9])
    task["plots"] = plot_binary(y, prob, tmp_path, "hate speech (strict)")
    written = write_report(results, tmp_path)["markdown"].read_text(encoding="utf-8")
    assert r"![hate speech (strict)\_roc.png](hate%20speech%20%28strict%29_roc.png)" in written


def test_format_table_lists_tasks_and_ablations(tmp_path: Path) -> None:
    table = format_table(_results(tmp_path))
    lines = table.splitlines()
    assert lines[0].startswith("model: runs/memes")
    assert "hate (binary)" in lines and "davidson (multiclass)" in lines
    header = next(line for line in lines if line.startswith("variant") and "average_precision" in line)
    assert header.split() == ["variant", "auroc", "average_precision", "f1", "macro_f1", "ece", "n"]
    assert any(line.startswith("without_image") for line in lines)
    assert any(line.startswith("without_text") and "n/a" in line for line in lines)


def test_format_table_puts_the_ece_next_to_a_calibrated_models_range(tmp_path: Path) -> None:
    results = _results(tmp_path)
    metrics = results["tasks"]["hate"]["metrics"]
    assert "calibrated model" not in format_table(results)  # no range in the report: no line
    metrics |= {"ece_if_calibrated_low": 0.0312, "ece_if_calibrated_high": 0.0891}
    expected = f"ECE {metrics['ece']:.4f}: a calibrated model would show 0.031–0.089 on these posts"
    assert expected in format_table(results).splitlines()


def test_invalid_results_raise(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'tasks'"):
        write_report({"model": "m", "data": "d", "split": "s"}, tmp_path)  # type: ignore[typeddict-item]
    task = {"type": "regression", "metrics": {}}
    bad: Results = {"model": "m", "data": "d", "split": "s", "tasks": {"t": task}}  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="regression"):
        format_table(bad)


def test_a_slice_too_small_to_measure_reads_unmeasured_not_na_with_a_note_and_a_measured_ones_na_stays(
    tmp_path: Path,
) -> None:
    results = _results(tmp_path)
    y, prob = np.array([0, 0, 0]), np.array([0.1, 0.2, 0.3])
    results["tasks"]["hate"]["slices"] = {"one class": binary_metrics(y, prob, threshold=0.5), "small": {"n": 20}}
    md = write_report(results, tmp_path / "report")["markdown"].read_text()
    small = next(line for line in md.splitlines() if line.startswith("| small |"))
    assert small == "| small | 20 | — | — | — | — | — |"
    assert "—: not measured, on a slice of fewer than 30 posts" in md
    one_class = next(line for line in md.splitlines() if line.startswith("| one class |"))
    assert one_class.startswith("| one class | 3 | n/a | n/a |")
    results["tasks"]["hate"]["slices"] = {"small": {"n": 20}, "smaller": {"n": 5}}  # no metric column: no cell —
    md = write_report(results, tmp_path / "report")["markdown"].read_text()
    assert "| small | 20 |" in md and "not measured, on a slice" not in md


@pytest.mark.parametrize(
    "theirs",
    [json.dumps({"files": ["notes.txt", "plots/mine.png"]}), '{"files": ["notes.txt"', "my own list of files\n"],
    ids=["a record without its writer", "not JSON", "text"],
)
def test_a_written_json_faim_did_not_write_is_left_with_the_files_it_lists(tmp_path: Path, theirs: str) -> None:
    folder = tmp_path / "mine"
    (folder / "plots").mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    (folder / "plots" / "mine.png").write_text("mine")
    (folder / WRITTEN).write_text(theirs)
    with pytest.warns(
        FaimWarning, match=rf"{folder / WRITTEN}: is not a record faim eval wrote .* no file it lists is removed"
    ):
        assert not replace_written(folder, ["metrics.json", "metrics.md", WRITTEN])
    assert (folder / WRITTEN).read_text() == theirs
    assert (folder / "notes.txt").read_text() == (folder / "plots" / "mine.png").read_text() == "mine"


def test_a_record_faim_wrote_names_its_writer_and_is_read_back(tmp_path: Path) -> None:
    folder = tmp_path / "report"
    assert replace_written(folder, ["metrics.json", "old.png", WRITTEN])
    (folder / "old.png").write_text("plot")
    assert replace_written(folder, ["metrics.json", WRITTEN])
    assert json.loads((folder / WRITTEN).read_text()) == {"writer": "faim eval", "files": ["metrics.json", WRITTEN]}
    assert not (folder / "old.png").exists()


def test_a_task_named_like_html_or_an_entity_is_shown_as_written_in_its_heading_and_note(tmp_path: Path) -> None:
    results = _results(tmp_path)
    hate = results["tasks"].pop("hate") | {"terms": {"terms": 1, "share_holding": [0.5, 0.5], "overall": [0.5, 0.5]}}
    hate["terms"] |= {"positive": "<b>hate</b>", "shown": [{"term": "rat", "posts": [4, 4], "shares": [1.0, 0.0]}]}
    results["tasks"] = {"<script>alert(1)</script>": hate, "a &amp; b": results["tasks"]["davidson"]}
    md = write_report(results, tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    assert "## &lt;script&gt;alert(1)&lt;/script&gt; (binary)" in md and "## a &amp;amp; b (multiclass)" in md
    assert "<script>" not in md and "the labels call 0 % &lt;b&gt;hate&lt;/b&gt;" in md
    assert "the labels call 0 % <b>hate</b>" in format_table(results)  # the console shows it as written


def test_a_task_or_label_whose_backticks_pair_with_faims_own_shows_no_html(tmp_path: Path) -> None:
    # a task named ``<img src=x onerror=alert(1)>`, and a backtick in a label beside the note's own code span
    # (`faim calibrate --head`), left HTML between what a regular expression took for code spans run in metrics.md
    results = _results(tmp_path)
    hate = results["tasks"].pop("hate") | {"terms": {"terms": 1, "share_holding": [0.5, 0.5], "overall": [0.5, 0.5]}}
    hate["terms"] |= {"positive": "h`<img src=x>", "shown": [{"term": "`<b>", "posts": [4, 4], "shares": [1.0, 0.0]}]}
    results["tasks"] = {"``<img src=x onerror=alert(1)>`": hate}
    md = write_report(results, tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    assert "<img" not in md and "<b>" not in md
    assert "## \\`\\`&lt;img src=x onerror=alert(1)&gt;\\` (binary)" in md
    assert "'\\`&lt;b&gt;' (4 posts" in md and "(`faim calibrate --head`" in md  # faim's own code span stays


def test_a_file_an_earlier_run_wrote_under_another_name_of_what_this_run_wrote_is_kept(tmp_path: Path) -> None:
    # on macOS and Windows Hate_roc.png and hate_roc.png name one file: removing the earlier run's name of it removed
    # the plot this run had just written; a second name of one file (a hard link) stands for it here
    folder = tmp_path / "eval"
    replace_written(folder, ["Hate_roc.png", "old_roc.png", WRITTEN])
    for name in ("hate_roc.png", "old_roc.png"):
        (folder / name).write_bytes(b"png")
    (folder / "Hate_roc.png").hardlink_to(folder / "hate_roc.png")
    assert replace_written(folder, ["hate_roc.png", WRITTEN])
    assert (folder / "Hate_roc.png").is_file() and (folder / "hate_roc.png").read_bytes() == b"png"
    assert not (folder / "old_roc.png").exists()  # another file, which this run did not write, goes
    assert json.loads((folder / WRITTEN).read_text(encoding="utf-8"))["files"] == ["hate_roc.png", WRITTEN]


def without_file_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Have every file's stat give st_ino 0, as a Windows network share does (``monkeypatch.undo`` ends it)."""
    real = Path.stat

    class NoIndex:
        def __init__(self, found: object) -> None:
            self.st_dev, self.st_ino, self.st_mode = found.st_dev, 0, found.st_mode

    monkeypatch.setattr(Path, "stat", lambda self, **kwargs: NoIndex(real(self, **kwargs)))


def test_an_earlier_runs_file_goes_where_the_file_system_gives_no_file_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a Windows network share gives every file st_ino 0, which Python documents as meaningless: every earlier name
    # read as one file with this run's and none was removed
    folder = tmp_path / "eval"
    replace_written(folder, ["old_roc.png", WRITTEN])
    for name in ("old_roc.png", "new_roc.png"):
        (folder / name).write_bytes(b"png")
    without_file_index(monkeypatch)
    assert replace_written(folder, ["new_roc.png", WRITTEN])
    assert not (folder / "old_roc.png").exists() and (folder / "new_roc.png").is_file()


def test_an_earlier_name_of_what_this_run_wrote_is_kept_where_the_file_system_gives_no_file_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # on a Windows network share (st_ino 0) Hate_roc.png and hate_roc.png name one file: told apart by no file index,
    # the earlier run's name of it was removed, and the plot this run had just written with it; a hard link stands for
    # the second name here
    folder = tmp_path / "eval"
    replace_written(folder, ["Hate_roc.png", "old_roc.png", WRITTEN])
    for name in ("hate_roc.png", "old_roc.png"):
        (folder / name).write_bytes(b"png")
    (folder / "Hate_roc.png").hardlink_to(folder / "hate_roc.png")
    without_file_index(monkeypatch)
    assert replace_written(folder, ["hate_roc.png", WRITTEN])
    monkeypatch.undo()
    assert (folder / "Hate_roc.png").read_bytes() == b"png"  # this run's plot, where the names are one
    assert not (folder / "old_roc.png").exists()  # a stale file still goes


def test_a_model_and_data_path_holding_backticks_stay_in_their_code_spans(tmp_path: Path) -> None:
    # a data path holding a backtick closed the code span it was written in, and its HTML ran in metrics.md
    results = _results(tmp_path) | {"model": "runs/`m`", "data": "posts`<img src=x onerror=alert(1)>`.jsonl"}
    md = write_report(results, tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    assert "- model: `` runs/`m` ``\n- data: ``posts`<img src=x onerror=alert(1)>`.jsonl``\n- split: `dev`" in md


def test_a_report_written_again_and_stopped_part_way_through_a_file_leaves_the_earlier_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = _results(tmp_path)
    paths = write_report(results, tmp_path / "out")
    earlier = {name: path.read_bytes() for name, path in paths.items()}
    written = Path.write_text

    def stopped(path: Path, text: str, *args, **kwargs) -> int:  # Ctrl-C or SIGTERM halfway through the file
        written(path, text[: len(text) // 2], *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_report({**results, "data": "other.jsonl"}, tmp_path / "out")
    monkeypatch.undo()
    assert {name: path.read_bytes() for name, path in paths.items()} == earlier
    assert sorted(path.name for path in (tmp_path / "out").iterdir() if path.suffix != ".png") == sorted(
        path.name for path in paths.values()
    )  # no file written in part left beside them


def test_the_model_and_data_right_to_left_are_written_apart_from_the_lines_left_to_right(tmp_path: Path) -> None:
    # a name ending in figures or brackets after right-to-left letters took them, and the rest of the line, with it
    results = {"model": "runs/نموذج (2)", "data": "ملف\u202e.jsonl", "split": "dev", "tasks": {}}
    text = (write_report(results, tmp_path)["markdown"]).read_text(encoding="utf-8")
    assert "- model: \u200e`runs/نموذج (2)`\u200e\n- data: \u200e`ملف.jsonl`\u200e\n- split: `dev`" in text


@pytest.mark.parametrize(
    ("labelled", "note"),
    [
        (
            [[1, 0, np.nan], [0, 1, np.nan], [1, 1, np.nan], [0, 0, np.nan]],
            "no post is labelled for 'c', so macro AUROC and macro average precision are of the other labels alone, "
            "as its AUROC and average precision read n/a",
        ),
        (
            [[1, 1, np.nan], [0, 1, np.nan], [1, np.nan, np.nan], [0, 1, np.nan]],
            "the labelled posts all carry or all lack 'b' (3 posts), and no post is labelled for 'c', so macro AUROC "
            "and macro average precision are of the other labels alone, as their AUROC and average precision read n/a",
        ),
        (
            [[1, 1, np.nan], [1, 1, np.nan], [1, 1, np.nan], [np.nan, 1, np.nan]],
            "the labelled posts all carry or all lack 'a' (3 posts) and 'b' (4 posts), and no post is labelled for "
            "'c', so macro AUROC and macro average precision, which need posts with and without a label, read n/a",
        ),
    ],
)
def test_a_multilabel_label_no_post_is_labelled_for_is_told_apart_from_one_its_posts_all_carry(
    labelled: list, note: str, tmp_path: Path
) -> None:
    # such a label was said to be one the posts all carry or all lack, counting the task's posts
    metrics = multilabel_metrics(np.array(labelled), np.full((4, 3), 0.6), ["a", "b", "c"], [0.5, 0.5, 0.5])
    results: Results = {
        "model": "m",
        "data": "d",
        "split": "s",
        "tasks": {"t": {"type": "multilabel", "metrics": metrics}},
    }
    write_report(results, tmp_path)
    assert note in format_table(results).splitlines()
    assert f"\n\n{note}\n" in (tmp_path / "metrics.md").read_text(encoding="utf-8")
