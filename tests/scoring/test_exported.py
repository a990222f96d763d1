"""Scoring a dump on the exported runtime: the rows the torch path writes (scores within 1e-4, same decisions and
error rows), from processes where torch, transformers and timm cannot be imported; a saved model is exported once
into the output folder; torch's own options are refused."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import (
    check_overflowing_rows,
    edited_model,
    export_posts,
    overflowing_run,
    tiny_recipe,
    without_packages,
)

from faim.artifact_manifest import MANIFEST, ArtifactError
from faim.cli.main import main
from faim.data.images import IMAGE_DECODING
from faim.detector import Detector
from faim.file_digests import sealed
from faim.runtime import ExportError
from faim.scoring import exported as exported_module
from faim.scoring import runner
from faim.scoring.engine import score_dump
from faim.scoring.exported import EXPORT_DIR, export_once, score_exported
from faim.scoring.options import ScoringOptions
from faim.weights import sha256_file


def write_dump(root: Path) -> Path:
    """The export test posts as JSONL rows with their pictures as files, and rows that cannot be scored (a line that
    is not JSON, a missing picture, a post holding nothing)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for post in export_posts():
        names = []
        for index, image in enumerate(post.pop("images", [])):
            (root / f"{post['id']}-{index}.png").write_bytes(image)
            names.append(f"{post['id']}-{index}.png")
        lines.append(json.dumps(post | ({"images": names} if names else {})))
    lines += ["{not json", json.dumps({"id": "lost", "text": "x", "images": ["nowhere.png"]})]
    lines.append(json.dumps({"id": "empty", "text": ""}))  # nothing any model reads
    path = root / "dump.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows(out: Path) -> list[dict]:
    return sorted(pq.read_table(out).to_pylist(), key=lambda row: row["source"])


def retrained(model_dir: Path, out: Path) -> Path:
    """The saved model at ``model_dir`` with other weights (its binary head's moved), saved to ``out``."""
    import torch

    detector = Detector.load(model_dir)
    with torch.no_grad():
        next(detector.model.heads["harm"].parameters()).add_(1.0)
    detector.save(out)
    return out


@pytest.fixture
def export_reused(exported: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``exported``, a run's export of whose saved model is a copy of its export by ``faim export`` (the same command
    ``export_apart`` runs, on the same files) rather than written again; another model is exported as ever. For the
    tests of what a run does with its export; exporting it apart is the first run's of
    ``test_a_saved_model_is_exported_once_into_the_output_and_a_run_resumes_on_it``."""
    model_dir, export_dir = exported
    manifest = sha256_file(model_dir / MANIFEST)
    export_apart = exported_module.export_apart

    def reused(model: Path, target: Path) -> None:
        if sha256_file(model / MANIFEST) == manifest:
            shutil.copytree(export_dir, target)
        else:
            export_apart(model, target)

    monkeypatch.setattr(exported_module, "export_apart", reused)
    return exported


def test_an_export_scores_a_dump_as_the_saved_model_does_with_torch_blocked_in_every_process(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, export_dir = exported
    dump = write_dump(tmp_path / "dump")
    environment = without_packages(tmp_path / "blocker")
    command = [sys.executable, "-m", "faim", "score", str(export_dir), str(dump), "-o", str(tmp_path / "onnx")]
    done = subprocess.run(
        [*command, "--runtime", "onnx", "--workers", "2", "--shard-rows", "3"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "is blocked" not in done.stderr

    score_dump(model_dir, dump, tmp_path / "torch", options=ScoringOptions.exact(), workers=1, progress=False)
    served, eager = rows(tmp_path / "onnx"), rows(tmp_path / "torch")
    assert [(r["source"], r["id"], r["error_kind"]) for r in served] == [
        (r["source"], r["id"], r["error_kind"]) for r in eager
    ]
    assert {r["id"] for r in served if r["error"]} == {None, "lost", "empty"}  # bad JSON, no picture, nothing
    for ours, theirs in zip(served, eager):
        for name, value in theirs.items():
            if isinstance(value, float):
                assert ours[name] == pytest.approx(value, abs=1e-4), (ours["id"], name)
            elif name != "error":
                assert ours[name] == value, (ours["id"], name)


def test_a_post_whose_scores_are_not_finite_is_its_rows_error_and_the_others_are_scored(
    overflowing: tuple[Path, Path], tmp_path: Path
) -> None:
    rows = overflowing_run(overflowing[1], tmp_path, "--runtime", "onnx")
    check_overflowing_rows(rows, tmp_path / "dump.jsonl")


def test_a_saved_model_is_exported_once_into_the_output_and_a_run_resumes_on_it(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, _ = exported
    dump = write_dump(tmp_path / "dump")
    first = score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    (export,) = (tmp_path / "out" / EXPORT_DIR).iterdir()
    written = (export / "faim-export.json").stat().st_mtime_ns
    again = score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    assert first.rows == again.rows == 8 and again.rows_this_run == 0 and again.resumed_shards == first.shards
    assert (export / "faim-export.json").stat().st_mtime_ns == written
    assert len(pq.read_table(tmp_path / "out")) == 8  # the export's files are not read as rows


def test_a_runs_own_export_damaged_since_is_named_with_what_to_do_and_exported_anew_once_removed(
    export_reused: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, _ = export_reused
    dump = write_dump(tmp_path / "dump")
    score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    (own,) = (tmp_path / "out" / EXPORT_DIR).iterdir()
    graph = next(own.glob("*.onnx"))
    graph.write_bytes(graph.read_bytes() + b"\0")
    with pytest.raises(ExportError, match=rf"{re.escape(graph.name)}.*remove {re.escape(str(own))} and run again"):
        score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    shutil.rmtree(own)
    again = score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    assert again.rows == 8 and again.rows_this_run == 0


def test_an_export_left_in_the_output_by_another_saved_model_is_not_scored_with(
    export_reused: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, export_dir = export_reused
    other = shutil.copytree(model_dir, tmp_path / "other")  # the same weights, calibrated otherwise
    manifest = json.loads((other / "faim.json").read_text())
    manifest["tasks"][0]["temperature"] *= 4
    (other / "faim.json").write_text(json.dumps(sealed(manifest)))
    dump = write_dump(tmp_path / "dump")
    score_exported(export_dir, dump, tmp_path / "first", workers=1, progress=False)  # the first model's scores
    export_once(model_dir, tmp_path / "out")  # what a run of the first model leaves if it stops before a shard
    score_exported(other, dump, tmp_path / "out", workers=1, progress=False)
    score_dump(other, dump, tmp_path / "torch", options=ScoringOptions.exact(), workers=1, progress=False)
    first, scored, eager = ([row["harm"] for row in rows(tmp_path / out)] for out in ("first", "out", "torch"))
    assert scored == pytest.approx(eager, abs=1e-4)  # the other model's scores, as torch gives them
    assert max(abs(a - b) for a, b in zip(scored, first) if a is not None) > 0.01
    assert len(list((tmp_path / "out" / EXPORT_DIR).iterdir())) == 1  # the first model's export is gone


def test_the_model_calibrated_otherwise_does_not_resume_the_run_of_its_earlier_calibration(
    export_reused: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, _ = export_reused
    recalibrated = shutil.copytree(model_dir, tmp_path / "recalibrated")
    manifest = json.loads((recalibrated / "faim.json").read_text())
    manifest["tasks"][0]["threshold"] = 0.9  # what faim calibrate changes: the same files, other thresholds
    (recalibrated / "faim.json").write_text(json.dumps(sealed(manifest)))
    dump = write_dump(tmp_path / "dump")
    score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    with pytest.raises(ValueError, match=r"the model's tasks, thresholds or calibration differ"):
        score_exported(recalibrated, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    again = score_exported(model_dir, dump, tmp_path / "out", workers=1, shard_rows=3, progress=False)
    assert again.rows == 8 and again.rows_this_run == 0


def test_a_run_on_an_export_reading_pictures_is_not_resumed_by_a_faim_decoding_them_otherwise(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, export_dir = exported
    dump = write_dump(tmp_path / "dump")
    score_exported(export_dir, dump, tmp_path / "out", workers=1, progress=False)
    recorded = json.loads((tmp_path / "out" / "_run.json").read_text(encoding="utf-8"))
    assert recorded["settings"]["image_decoding"] == IMAGE_DECODING
    monkeypatch.setattr(runner, "IMAGE_DECODING", IMAGE_DECODING + 1)
    with pytest.raises(ValueError, match=r"\(its pictures were decoded otherwise: .* or finish the run with the faim"):
        score_exported(export_dir, dump, tmp_path / "out", workers=1, progress=False)


def test_a_run_of_a_saved_model_embedding_pictures_it_does_not_fuse_records_no_picture_decoding(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import faim

    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"]["kinds"] = ["comments", "text"]
    faim.build(recipe).save(str(tmp_path / "model"))
    dump = write_dump(tmp_path / "dump")
    score_exported(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False)
    assert "image_decoding" not in json.loads((tmp_path / "out" / "_run.json").read_text(encoding="utf-8"))["settings"]
    monkeypatch.setattr(runner, "IMAGE_DECODING", IMAGE_DECODING + 1)
    assert score_exported(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False).rows_this_run == 0


def test_an_output_folder_holding_another_models_run_is_refused_before_anything_in_it_is_removed(
    export_reused: tuple[Path, Path], tmp_path: Path
) -> None:
    model_dir, _ = export_reused
    other = retrained(model_dir, tmp_path / "other")
    dump = write_dump(tmp_path / "dump")
    score_exported(model_dir, dump, tmp_path / "out", workers=1, progress=False)
    before = sorted(
        (path.relative_to(tmp_path / "out"), path.stat().st_mtime_ns) for path in (tmp_path / "out").rglob("*")
    )
    with pytest.raises(ValueError, match=r"holds another scoring run \(the model's files differ\)"):
        score_exported(other, dump, tmp_path / "out", workers=1, progress=False)
    after = sorted(
        (path.relative_to(tmp_path / "out"), path.stat().st_mtime_ns) for path in (tmp_path / "out").rglob("*")
    )
    assert after == before  # the first model's export and parts are left as they were


def test_a_missing_dump_and_an_output_folder_of_other_files_are_named_before_a_saved_model_is_exported(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        score_exported(exported[0], tmp_path / "nowhere.jsonl", tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / EXPORT_DIR).exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError, match="holds files that are not a scoring run's"):
        score_exported(exported[0], write_dump(tmp_path / "dump"), tmp_path / "mine", progress=False)
    assert [path.name for path in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_a_saved_model_whose_manifest_is_damaged_is_named_before_anything_is_exported(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(exported[0], damaged)
    (damaged / "faim.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"damaged/faim.json: not a faim model's manifest \(no encoders, files"):
        score_exported(damaged, write_dump(tmp_path / "dump"), tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_an_export_whose_manifest_loading_refuses_is_refused_in_one_message_before_anything_is_written(
    exported: tuple[Path, Path], tmp_path: Path, workers: int
) -> None:
    export = edited_model(exported[1], tmp_path / "export", lambda m: m["fusion"].update(graph="missing.onnx"))
    refusal = "faim-export.json: fusion: graph 'missing.onnx' is not a file listed under files"
    with pytest.raises(ExportError, match=re.escape(refusal)):
        score_exported(export, write_dump(tmp_path / "dump"), tmp_path / "out", workers=workers, progress=False)
    assert not (tmp_path / "out").exists()  # no worker started


def test_an_unknown_engine_is_refused_before_a_saved_model_is_exported(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="^engine must be one of embedded, ray, got 'spark'$"):
        score_exported(exported[0], write_dump(tmp_path / "dump"), tmp_path / "out", engine="spark", progress=False)
    assert not (tmp_path / "out").exists()


def test_neither_scores_nor_embeddings_is_refused_before_a_saved_model_is_exported(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="^scores and embeddings both off: nothing to write"):
        score_exported(exported[0], write_dump(tmp_path / "dump"), tmp_path / "out", scores=False, progress=False)
    assert not (tmp_path / "out").exists()


def test_options_of_the_torch_runtime_are_refused_naming_them(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _, export_dir = exported
    dump = write_dump(tmp_path / "dump")
    status = main(["score", str(export_dir), str(dump), "-o", str(tmp_path / "out"), "--runtime", "onnx", "--compile"])
    assert status == 2
    assert "--compile: only with --runtime torch" in capsys.readouterr().err
