"""`faim score` hands its speed-up options to the engine and refuses bad counts and conflicting options up front."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import faim.scoring.engine
import faim.scoring.exported
from faim.cli.main import main
from faim.scoring.options import ScoringOptions


@pytest.fixture
def engine_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of each call `faim score` makes to the torch engine (which scores nothing here)."""
    calls: list[dict[str, Any]] = []

    class Summary:
        def format(self) -> str:
            return "scored"

    def record(model: str, dump: str, out: str, **kwargs: Any) -> Summary:
        calls.append(kwargs)
        return Summary()

    monkeypatch.setattr(faim.scoring.engine, "score_dump", record)
    return calls


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        ([], ScoringOptions()),
        (["--bf16"], ScoringOptions(bf16=True)),
        (["--exact"], ScoringOptions.exact()),
        (["--exact", "--compile"], ScoringOptions(**(ScoringOptions.exact().to_dict() | {"compile": True}))),
    ],
)
def test_bf16_is_used_only_when_asked_for(flags: list[str], options: ScoringOptions, engine_calls, tmp_path) -> None:
    assert main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), *flags]) == 0
    assert engine_calls[0]["options"] == options
    assert not ScoringOptions().bf16


def test_scores_into_the_model_or_a_folder_inside_it_are_refused_before_the_run_begins(
    engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for out in (model / "scores", model):
        assert main(["score", str(model), "dump.jsonl", "-o", str(out)]) == 2
        refused = f"-o {out}: that is the model or a folder inside it ({model}); the output goes elsewhere"
        assert f"faim score: error: {refused}" in capsys.readouterr().err
    assert not engine_calls and not any(model.iterdir())


def test_exact_and_bf16_together_are_refused(engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), "--exact", "--bf16"]) == 2
    assert "--exact and --bf16: choose one" in capsys.readouterr().err and not engine_calls


def test_exact_with_the_onnx_runtime_is_refused_saying_what_it_scores_with(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []

    def record(model: str, dump: str, out: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        return "scored"

    monkeypatch.setattr(faim.scoring.exported, "score_exported", record)
    assert main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), "--runtime", "onnx", "--exact"]) == 2
    error = capsys.readouterr().err
    assert "faim score: error: --exact: only with --runtime torch" in error
    assert "in fp32 with full JPEG decoding" in error and not calls


@pytest.mark.parametrize("option", ["--batch-size", "--shard-rows", "--workers"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_count_below_one_is_refused_naming_its_option(
    option: str, value: str, engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), option, value])
    assert exit_.value.code == 2 and not engine_calls
    assert f"argument {option}: expected a whole number of at least 1, got '{value}'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "embed"])
def test_an_export_without_the_onnx_runtime_is_refused_saying_to_add_it(
    command: str, engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    export = bare_export(tmp_path / "export", "onnx")
    assert main([command, str(export), "dump.jsonl", "-o", str(tmp_path / "out")]) == 2
    error = f"faim {command}: error: {export}: an export written by faim export; read it with --runtime onnx\n"
    assert capsys.readouterr().err == error and not engine_calls


def bare_export(directory: Path, graph_format: str) -> Path:
    """A folder holding the manifest of an export of graphs in ``graph_format`` that lists no file."""
    directory.mkdir()
    manifest = {"format": 1, "files": {}, "max_elements": 8, "kinds": {}, "encoders": {}, "fusion": {}, "tasks": []}
    (directory / "faim-export.json").write_text(json.dumps(manifest | {"graph_format": graph_format}), "utf-8")
    return directory


@pytest.mark.parametrize("runtime", [[], ["--runtime", "onnx"]])
def test_a_pt2_export_is_refused_by_either_runtime_saying_what_loads_it_before_anything_is_written(
    runtime: list[str], engine_calls, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    export = bare_export(tmp_path / "export", "pt2")
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"id": "1", "text": "hello"}\n', encoding="utf-8")
    assert main(["score", str(export), str(dump), "-o", str(tmp_path / "out"), *runtime]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"faim score: error: {export}: ") and error.count("\n") == 1
    assert "load it with faim.export.programs.load_export, which needs torch" in error and "--runtime onnx" not in error
    assert not (tmp_path / "out").exists() and not engine_calls


WITHOUT_ONNXRUNTIME = """
import contextlib, io, json, sys
sys.modules["onnxruntime"] = None  # as where it is not installed: importing it raises ModuleNotFoundError
import faim.scoring.engine
from faim.cli.main import main

faim.scoring.engine.score_dump = lambda *args, **kwargs: "scored"
found = []
for runtime, model in [("torch", "model"), ("torch", sys.argv[1]), ("onnx", "model")]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["score", "--runtime", runtime, model, "dump.jsonl", "-o", sys.argv[2]])
    found.append([code, err.getvalue()])
print(json.dumps(found))
"""


@pytest.mark.slow
def test_the_torch_runtime_scores_a_saved_model_and_refuses_an_export_where_onnxruntime_is_not_installed(
    tmp_path: Path,
) -> None:
    export = bare_export(tmp_path / "export", "onnx")
    command = [sys.executable, "-c", WITHOUT_ONNXRUNTIME, str(export), str(tmp_path / "out")]
    result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    saved, exported, onnx = json.loads(result.stdout.splitlines()[-1])
    assert saved == [0, ""]
    refused = f"{export}: an export written by faim export; read it with --runtime onnx"
    assert exported == [2, f"faim score: error: {refused}\n"]
    install = "pip install 'faim-sdk[runtime]'"
    assert onnx == [2, f"faim score: error: needs the Python package 'onnxruntime', not installed: {install}\n"]


@pytest.mark.parametrize(("value", "limit"), [("5000", 5000), ("none", None), ("0", None)])
def test_max_image_pixels_is_the_pixel_limit_while_the_dump_is_scored_and_put_back_after(
    value: str, limit: int | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = []
    monkeypatch.setattr(faim.scoring.engine, "score_dump", lambda *args, **kwargs: seen.append(Image.MAX_IMAGE_PIXELS))
    before = Image.MAX_IMAGE_PIXELS
    with pytest.raises(AttributeError):  # the stand-in gives no summary to print
        main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), "--max-image-pixels", value])
    assert seen == [limit] and Image.MAX_IMAGE_PIXELS == before


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_max_image_pixels_that_is_no_count_is_refused(value: str, capsys: pytest.CaptureFixture, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["score", "model", "dump.jsonl", "-o", str(tmp_path / "out"), "--max-image-pixels", value])
    assert exit_.value.code == 2
    assert f"argument --max-image-pixels: expected a number of pixels or none, got '{value}'" in capsys.readouterr().err


def test_the_help_says_a_saved_dataset_is_a_dump_where_pictures_resolve_and_what_a_resume_must_repeat(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "a Hugging Face dataset folder written by Dataset.save_to_disk" in said
    assert "(default: the folder each input file, or saved dataset folder, lies in)" in said
    assert "the same --map, --image-root, --shard-rows (or its default again), --exact, --bf16, --compile" in said
    assert "--workers, --batch-size, --engine and --device may change" in said
