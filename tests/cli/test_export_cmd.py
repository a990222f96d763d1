"""``faim export --quantize int8``: the int8 export is measured against fp32 on labelled posts, kept
when its macro-F1 holds, quantized again smoothed and measured again when it drops more than ``--max-drop``, and
refused naming both figures when that drops too much as well; its measuring options are refused without it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import onnx
import pytest
from conftest import tiny_recipe

from faim.cli import export_cmd
from faim.cli.export_cmd import report
from faim.cli.main import main
from faim.detector import Detector
from faim.eval.quantization import TIMED_POSTS, QuantizationCheck, compare_exports
from faim.export import model as export_model
from faim.export.quantize import MAX_DROP


def test_an_int8_export_is_measured_and_kept_when_it_holds(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    data = ["--data", str(demo_data["validation"]), "--map", "labels.harmful=label"]
    out = tmp_path / "int8"
    assert main(["export", str(tiny_model_dir), "-o", str(out), "--quantize", "int8", "--max-drop", "1", *data]) == 0
    printed = capsys.readouterr().out
    assert "int8 against fp32 on 160 posts" in printed and "harmful: macro-F1" in printed
    manifest = json.loads((out / "faim-export.json").read_text())
    assert manifest["quantized"] == "int8"
    graphs = {part["graph"] for entry in manifest["encoders"].values() for part in entry["parts"]}
    assert manifest["smoothing"] == dict.fromkeys(graphs)  # it held, so it was not quantized again smoothed
    assert "quantizing again" not in printed
    text_graph = onnx.load(str(out / "encoders" / "text" / "encoder.onnx"))
    assert any(init.data_type == onnx.TensorProto.INT8 for init in text_graph.graph.initializer)
    ops = {node.op_type for node in text_graph.graph.node}
    assert "QAttention" in ops and "Attention" not in ops  # the query, key and value products are int8 too
    assert "int8 against fp32" not in capsys.readouterr().out

    def worse(*args: Any) -> QuantizationCheck:  # int8 measured 0.5 below what it scores
        check = compare_exports(*args)
        return replace(check, macro_f1={task: (fp32, int8 - 0.5) for task, (fp32, int8) in check.macro_f1.items()})

    monkeypatch.setattr(export_cmd, "compare_exports", worse)
    refused = tmp_path / "refused"
    assert (
        main(["export", str(tiny_model_dir), "-o", str(refused), "--quantize", "int8", "--max-drop", "0.1", *data]) == 2
    )
    captured = capsys.readouterr()
    assert "drop" in captured.out and "> --max-drop 0.1: quantizing again, smoothed on 160 posts" in captured.out
    assert captured.out.count("int8 against fp32 on 160 posts") == 2  # plain, then smoothed
    error = captured.err
    assert "int8 lowers 'harmful' macro-F1 from" in error and "> --max-drop 0.1; nothing was written" in error
    assert not refused.exists() and [p.name for p in tmp_path.iterdir()] == ["int8"]


def test_an_int8_export_refuses_a_folder_it_did_not_write_before_any_work_and_replaces_its_own(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, capsys
) -> None:
    data = ["--data", str(demo_data["validation"]), "--map", "labels.harmful=label"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["export", str(tiny_model_dir), "-o", str(mine), "--quantize", "int8", *data]) == 2
    captured = capsys.readouterr()
    assert f"{mine}: exists and is not one faim wrote" in captured.err and "int8 against fp32" not in captured.out
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"

    out = tmp_path / "export"
    assert main(["export", str(tiny_model_dir), "-o", str(out)]) == 0
    assert main(["export", str(tiny_model_dir), "-o", str(out), "--quantize", "int8", "--max-drop", "1", *data]) == 0
    assert json.loads((out / "faim-export.json").read_text())["quantized"] == "int8"


def test_an_export_stopped_as_its_graphs_are_written_says_nothing_was_written_and_leaves_the_folder_as_it_was(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    out = tmp_path / "export"
    assert main(["export", str(tiny_model_dir), "-o", str(out)]) == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    capsys.readouterr()

    def stopped(*args: Any) -> None:
        raise KeyboardInterrupt  # Ctrl-C as the fusion graph is traced, the encoders' written

    monkeypatch.setattr(export_model, "export_fusion", stopped)
    assert main(["export", str(tiny_model_dir), "-o", str(out)]) == 130
    assert capsys.readouterr().err == f"faim: interrupted: nothing was written: {out} is left as it was\n"
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert [path.name for path in tmp_path.iterdir()] == ["export"]  # what was written beside it is removed


def test_an_export_stopped_as_the_model_is_loaded_says_nothing_was_written(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    def stopped(*args: Any) -> None:
        raise KeyboardInterrupt  # Ctrl-C before the export is begun

    monkeypatch.setattr(Detector, "load", stopped)
    out = tmp_path / "export"
    assert main(["export", str(tiny_model_dir), "-o", str(out)]) == 130
    assert capsys.readouterr().err == f"faim: interrupted: nothing was written: {out} is left as it was\n"
    assert not out.exists()


def test_an_int8_export_stopped_once_it_took_the_place_of_out_says_it_is_written_whole(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    data = ["--data", str(demo_data["validation"]), "--map", "labels.harmful=label"]
    out = tmp_path / "int8"
    assert main(["export", str(tiny_model_dir), "-o", str(out)]) == 0
    capsys.readouterr()
    rmtree = shutil.rmtree

    def stopped(path: Path, *args: Any, **kwargs: Any) -> None:
        manifest = Path(path) / "faim-export.json"
        if manifest.is_file() and "quantized" not in json.loads(manifest.read_text()):
            raise KeyboardInterrupt  # Ctrl-C as the export there before, moved aside, is removed
        rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", stopped)
    assert main(["export", str(tiny_model_dir), "-o", str(out), "--quantize", "int8", "--max-drop", "1", *data]) == 130
    assert capsys.readouterr().err.startswith(f"faim: interrupted: {out} is written whole; what it held before")
    assert json.loads((out / "faim-export.json").read_text())["quantized"] == "int8"


def test_an_int8_export_stopped_as_its_working_folder_is_removed_names_it_and_says_nothing_was_written(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    data = ["--data", str(demo_data["validation"]), "--map", "labels.harmful=label"]
    out = tmp_path / "int8"
    rmtree = shutil.rmtree

    def stopped(path: Path, *args: Any, **kwargs: Any) -> None:
        if (Path(path) / "fp32").is_dir():
            raise KeyboardInterrupt  # Ctrl-C as the folder the export was worked out in is removed
        rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", stopped)
    assert main(["export", str(tiny_model_dir), "-o", str(out), "--quantize", "int8", "--max-drop", "1", *data]) == 130
    (working,) = tmp_path.glob(".faim-export-*")
    assert capsys.readouterr().err.splitlines()[-2:] == [
        f"faim export: warning: stopped as it removed {working}, where {out} was worked out: what is left of it is "
        f"removed by the next write of {out}",
        f"faim: interrupted: nothing was written: {out} is left as it was",
    ]
    assert not out.exists()


@pytest.mark.parametrize("max_drop", ["0.1", str(MAX_DROP)])
def test_options_of_the_int8_measurement_are_refused_without_quantize(
    max_drop: str, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, capsys
) -> None:
    data = ["--data", str(demo_data["validation"]), "--map", "labels.harmful=label", "--max-drop", max_drop]
    assert main(["export", str(tiny_model_dir), "-o", str(tmp_path / "export"), *data]) == 2
    assert "--data, --map, --max-drop: only with --quantize" in capsys.readouterr().err
    assert not (tmp_path / "export").exists()


def test_an_int8_export_of_posts_without_labels_mapped_is_refused_naming_the_file_before_exporting(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(export_cmd, "export_model", lambda *args, **kwargs: pytest.fail("the model was exported"))
    data = str(demo_data["validation"])  # its labels are in the column label, not mapped to the task harmful
    assert (
        main(["export", str(tiny_model_dir), "-o", str(tmp_path / "int8"), "--quantize", "int8", "--data", data]) == 2
    )
    error = capsys.readouterr().err
    assert f"{data}: no post carries a label for any task (harmful); map a column" in error
    assert "--map labels.TASK=COLUMN" in error


def test_an_int8_export_measured_on_the_recipes_split_refuses_a_mapping_it_would_not_read(
    tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    arguments = ["export", str(tiny_model_dir), "-o", str(tmp_path / "int8"), "--quantize", "int8"]
    assert main([*arguments, "--map", "labels.harmful=label"]) == 2
    assert "--map and --image-root read --data: without it the recipe's split is read" in capsys.readouterr().err
    assert not (tmp_path / "int8").exists()


def test_an_int8_export_measured_on_a_recipe_split_without_labels_says_to_give_a_labelled_file(
    unlabelled_split_model_dir: Path, tmp_path: Path, capsys
) -> None:
    assert main(["export", str(unlabelled_split_model_dir), "-o", str(tmp_path / "int8"), "--quantize", "int8"]) == 2
    error = capsys.readouterr().err
    assert "the recipe's validation split: no post carries a label for any task (harmful); the recipe's split" in error
    assert "give a labelled file as --data with --map labels.TASK=COLUMN" in error
    assert "map a column to a task's labels" not in error and not (tmp_path / "int8").exists()


def test_an_int8_export_of_a_model_whose_recipe_split_is_not_here_says_to_give_the_posts_as_data(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    import faim

    gone = tmp_path / "elsewhere" / "validation.jsonl"  # the model copied to a machine without its training data
    recipe = tiny_recipe(demo_data | {"validation": gone}, tmp_path / "run")
    faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    assert main(["export", str(tmp_path / "model"), "-o", str(tmp_path / "int8"), "--quantize", "int8"]) == 2
    error = capsys.readouterr().err
    assert f"faim export: error: data.validation: {gone} does not exist (resolved to {gone}); " in error
    assert (
        "--quantize measures the int8 export on the recipe's validation split: give labelled posts with --data" in error
    )
    assert not (tmp_path / "int8").exists()


def test_an_int8_export_whose_recipe_train_split_is_not_here_is_warned_of_before_the_work_and_goes_on(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    import faim

    gone = tmp_path / "elsewhere" / "train.jsonl"  # a drop over --max-drop smooths on the recipe's training split
    recipe = tiny_recipe(demo_data | {"train": gone}, tmp_path / "run")
    faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    loads = Detector.load
    said = []

    def load(*args: Any, **kwargs: Any) -> Detector:
        said.append(capsys.readouterr().err)  # what was said before the model is loaded
        return loads(*args, **kwargs)

    monkeypatch.setattr(Detector, "load", load)
    # an export int8 holds within --max-drop never reads the training split, as it did before it was looked for
    int8 = ["--quantize", "int8", "--max-drop", "1"]
    assert main(["export", str(tmp_path / "model"), "-o", str(tmp_path / "int8"), *int8]) == 0
    warned = " ".join(said[0].split())
    assert f"data.train: {gone} does not exist (resolved to {gone}); --quantize smooths the int8 export on" in warned
    assert "give labelled posts with --data (only where int8 loses more than --max-drop, found once the" in warned
    assert (tmp_path / "int8").is_dir()


def test_an_int8_export_measured_on_a_recipe_whose_source_refuses_an_argument_names_the_recipes_file(
    refused_source_model_dir: Path, tmp_path: Path, capsys
) -> None:
    assert main(["export", str(refused_source_model_dir), "-o", str(tmp_path / "int8"), "--quantize", "int8"]) == 2
    refused = f"{refused_source_model_dir / 'recipe.yaml'}: data: concat: evaluate_on must be one of first, all"
    assert refused in capsys.readouterr().err and not (tmp_path / "int8").exists()


@pytest.mark.parametrize(
    ("mapping", "error"),
    [
        (["text=text", "text=caption"], "--map text: given twice (text and caption); map it once"),
        (
            ["labels.harmfull=label"],
            "--map labels.harmfull: the model has no task 'harmfull' (did you mean 'harmful'?)",
        ),
    ],
)
def test_a_mapping_int8_cannot_measure_with_is_refused_before_the_model_is_loaded(
    mapping: list[str],
    error: str,
    tiny_model_dir: Path,
    demo_data: dict[str, Path],
    tmp_path: Path,
    monkeypatch,
    capsys,
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    data = ["--data", str(demo_data["validation"]), *(word for item in mapping for word in ("--map", item))]
    assert main(["export", str(tiny_model_dir), "-o", str(tmp_path / "x"), "--quantize", "int8", *data]) == 2
    assert error in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("name", "error"), [("empty.csv", "{data}: holds no post"), ("missing.jsonl", "{data} does not exist")]
)
def test_int8_data_that_is_missing_or_holds_no_post_is_refused_before_the_model_is_loaded(
    name: str, error: str, tiny_model_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    data = tmp_path / name
    if name == "empty.csv":
        data.write_text("id,text,label\n", encoding="utf-8")  # a header alone
    arguments = ["export", str(tiny_model_dir), "-o", str(tmp_path / "x"), "--quantize", "int8", "--data", str(data)]
    assert main([*arguments, "--map", "labels.harmful=label"]) == 2
    assert f"faim export: error: {error.format(data=data)}" in capsys.readouterr().err


def test_an_int8_export_of_posts_none_of_which_can_be_read_is_refused_naming_the_first_before_exporting(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(export_cmd, "export_model", lambda *args, **kwargs: pytest.fail("the model was exported"))
    data = tmp_path / "unread.jsonl"
    shutil.copy(demo_data["validation"], data)  # its pictures, named relative to the file, are not beside the copy
    arguments = ["export", str(tiny_model_dir), "-o", str(tmp_path / "int8"), "--quantize", "int8", "--data", str(data)]
    assert main([*arguments, "--map", "labels.harmful=label"]) == 2
    error = capsys.readouterr().err
    assert (
        f"faim export: error: {data}: all 160 posts could not be read, so the int8 check has none to measure" in error
    )
    assert f"; the first: {data}:1 (post id='validation-0') field 'images':" in error
    assert not (tmp_path / "int8").exists()


def test_the_help_gives_the_max_drop_an_int8_export_is_kept_with_by_default(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    assert f"(default: {MAX_DROP}, faim.export.quantize.MAX_DROP)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("value", ["nan", "-1", "2"])
def test_a_max_drop_outside_zero_to_one_is_refused_before_the_model_is_loaded(
    value: str, tiny_model_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    out = tmp_path / "int8"
    with pytest.raises(SystemExit) as exit_:
        main(["export", str(tiny_model_dir), "-o", str(out), "--quantize", "int8", "--max-drop", value])
    assert exit_.value.code == 2
    assert f"argument --max-drop: expected a number from 0 to 1, got '{value}'" in capsys.readouterr().err
    assert not out.exists()


def test_the_int8_report_names_the_tasks_not_measured_and_gives_no_speed_timed_on_too_few_posts() -> None:
    check = QuantizationCheck({"harm": (0.8, 0.75)}, (864.3, 12.3), 1, 0, ["topic", "flags"])
    lines = report(check).splitlines()
    measured = "int8 against fp32 on 1 post (0 unreadable left out), each task's macro-F1 on those labelled for it:"
    assert lines[0] == measured
    assert lines[1:] == [
        "  harm: macro-F1 0.8000 -> 0.7500",
        "  topic, flags: not measured (no post is labelled for them)",
        f"  posts/s: not timed on 1 post (too few: the first runs of each export would weigh most; {TIMED_POSTS} "
        "or more are timed)",
    ]
    timed = replace(check, posts=TIMED_POSTS, unmeasured=[])
    assert report(timed).splitlines()[2:] == ["  posts/s: 864.3 -> 12.3 (0.01x)"]


def test_an_export_into_the_model_folder_is_refused_naming_both_before_any_work(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    model = Path(shutil.copytree(tiny_model_dir, tmp_path / "model"))
    before = sorted(path.name for path in model.rglob("*"))
    monkeypatch.setattr(Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    for out in (model / "export", model / "deploy" / "onnx", model):
        assert main(["export", str(model), "-o", str(out)]) == 2
        refusal = f"faim export: error: -o {out}: that is the model or a folder inside it ({model}); the export goes"
        assert refusal in capsys.readouterr().err
    assert sorted(path.name for path in model.rglob("*")) == before
