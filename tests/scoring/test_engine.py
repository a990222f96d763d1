"""``score_dump``'s process layout: who scores, with how many torch threads, and what it refuses."""

from __future__ import annotations

import json
import re
import shutil
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch
from conftest import pooling_detector

import faim
from faim.artifact import ArtifactError
from faim.data.images import IMAGE_DECODING
from faim.notices import FaimWarning
from faim.recipe import validate
from faim.scoring import pool_parts, runner
from faim.scoring.engine import score_dump
from faim.scoring.exported import score_exported
from faim.scoring.worker import ShardScorer


def test_workers_1_scores_in_this_process_and_gives_back_the_callers_torch_thread_count(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "available_cores", lambda: 3)  # the scoring thread then runs 3 torch threads
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "out", workers=1, progress=False)
        assert torch.get_num_threads() == 1
        assert ThreadPoolExecutor(1).submit(torch.get_num_threads).result() == 1  # a thread new to torch too
    finally:
        torch.set_num_threads(before)
    assert summary.workers == 1 and summary.rows == summary.rows_this_run > 0


def test_no_device_scores_on_the_cpu(tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path) -> None:
    summary = score_dump(
        tiny_model_dir, demo_data["validation"], tmp_path / "out", workers=1, progress=False, device=None
    )
    assert summary.rows == summary.rows_this_run > 0


@pytest.mark.parametrize(("count", "value"), [("workers", 0), ("workers", -2), ("batch_size", 0), ("shard_rows", -5)])
def test_a_count_below_one_is_refused_before_anything_is_written(
    count: str, value: int, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=f"{count} must be at least 1, got {value}"):
        score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "out", progress=False, **{count: value})
    assert not (tmp_path / "out").exists()


def test_neither_scores_nor_embeddings_is_refused_before_anything_is_read_or_written(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="^scores and embeddings both off: nothing to write; ask for either or both$"):
        score_dump(tiny_model_dir, tmp_path / "absent.jsonl", tmp_path / "out", scores=False, progress=False)
    assert not (tmp_path / "out").exists()


def test_a_modified_model_and_a_bad_mapping_are_named_before_any_worker_starts(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="columns: unknown key 'foo'"):
        score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "out", columns={"foo": "bar"}, progress=False)
    model = shutil.copytree(tiny_model_dir, tmp_path / "model")
    with open(model / "recipe.yaml", "a", encoding="utf-8") as recipe:
        recipe.write("\n# edited\n")
    with pytest.raises(ArtifactError, match="recipe.yaml: sha256 does not match"):
        score_dump(model, demo_data["validation"], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_a_shards_scoring_time_counts_its_scoring_not_only_its_writing(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = ShardScorer.table

    def slow_table(self: ShardScorer, shard: object) -> object:
        time.sleep(0.3)
        return table(self, shard)

    monkeypatch.setattr(ShardScorer, "table", slow_table)
    summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "out", workers=1, progress=False)
    assert summary.scoring_seconds >= 0.3 * summary.shards


@pytest.mark.parametrize("empty_first", [False, True])
def test_a_kind_the_model_reads_that_no_row_of_the_first_shard_holds_is_warned_of_and_the_rows_scored(
    empty_first: bool, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    source = dump = tmp_path / "dump.jsonl"
    if empty_first:  # a folder whose file read first holds no row: the first shard is the next file's
        source = tmp_path / "dump"
        source.mkdir()
        (source / "a.jsonl").write_text("\n", encoding="utf-8")
        dump = source / "b.jsonl"
    dump.write_text("".join(json.dumps({"img": row.pop("image"), **row}) + "\n" for row in rows), encoding="utf-8")
    with pytest.warns(FaimWarning) as said:
        summary = score_dump(tiny_model_dir, source, tmp_path / "out", workers=1, shard_rows=50, progress=False)
    assert summary.rows == len(rows) and not summary.errors
    said_of = "no post holds any image, which the model reads: each is read without one, as where the column "
    said_of += "holding them is not mapped; "
    remedy = "map the column that holds them with --map image=COLUMN (columns: {image: COLUMN} in Python) (columns of "
    remedy += "the data no mapping reads: img, label, topic)"
    later = "later rows may hold them (once every row is scored, the run warns again if none does); if none does, "
    empty = [f"{source / 'a.jsonl'}: holds no row (an empty file, blank lines alone, or a header alone): nothing is "
             "read from it"] if empty_first else []  # fmt: skip
    assert [str(warning.message) for warning in said if warning.category is FaimWarning] == [
        f"{dump} (its first 50 rows, read before scoring): {said_of}{later}{remedy}",
        *empty,
        f"{source} (its {len(rows)} rows, scored): {said_of}{remedy}",
    ]


@pytest.mark.parametrize(("count", "shard_rows", "empty"), [(20, None, False), (64, 64, False), (64, 10_000, False),
                                                      (64, 64, True)])  # fmt: skip
def test_a_dump_whose_first_shard_is_all_of_it_is_warned_of_once_when_every_row_is_scored(
    count: int, shard_rows: int | None, empty: bool, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()][:count]
    dump = tmp_path / "dump"  # a folder, with an empty file after the rows' where ``empty``
    dump.mkdir()
    posts = "".join(json.dumps({"img": row.pop("image"), **row}) + "\n" for row in rows)
    (dump / "a.jsonl").write_text(posts, encoding="utf-8")
    if empty:
        (dump / "b.jsonl").write_text("\n", encoding="utf-8")
    with pytest.warns(FaimWarning) as said:
        score_dump(tiny_model_dir, dump, tmp_path / "out", workers=1, shard_rows=shard_rows, progress=False)
    messages = [str(warning.message) for warning in said if warning.category is FaimWarning]
    (message,) = [message for message in messages if "holds no row" not in message]  # the empty file's own warning
    assert message.startswith(f"{dump} (its {count} rows, scored): no post holds any image, which the model reads")


@pytest.mark.parametrize("later", ["image", "img"])
def test_the_end_of_a_run_says_what_every_row_holds_where_its_first_shard_holds_no_picture(
    later: str, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    for number, row in enumerate(rows):
        picture = row.pop("image")
        if number >= 50:  # the rows after the first shard hold a picture, under ``later``
            row[later] = picture
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.warns(FaimWarning) as said:
        score_dump(tiny_model_dir, dump, tmp_path / "out", workers=1, shard_rows=50, progress=False)
    messages = [str(warning.message) for warning in said if warning.category is FaimWarning]
    assert messages[0].startswith(f"{dump} (its first 50 rows, read before scoring): no post holds any image")
    assert messages[0].endswith("(columns of the data no mapping reads: label, topic)")
    if later == "image":
        assert messages[1:] == []
    else:
        (end,) = messages[1:]
        assert end.startswith(f"{dump} (its {len(rows)} rows, scored): no post holds any image")
        assert end.endswith("(columns of the data no mapping reads: label, topic, img)")


def test_a_picture_the_model_embeds_but_does_not_fuse_is_read_and_its_decoding_recorded_only_by_a_run_pooling_by_it(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector, _ = pooling_detector(demo_data, tmp_path, fused=["comments", "text"])
    detector.save(str(tmp_path / "model"))
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()]
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps({key: row[key] for key in ("id", "text", "comments")}) + "\n" for row in rows))
    out, pooled = tmp_path / "out", tmp_path / "pooled"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)  # the model reads no picture, which the dump lacks
        score_dump(tmp_path / "model", dump, out, workers=1, progress=False)
    assert "image_decoding" not in json.loads((out / "_run.json").read_text(encoding="utf-8"))["settings"]
    monkeypatch.setattr(runner, "IMAGE_DECODING", IMAGE_DECODING + 1)
    again = score_dump(tmp_path / "model", dump, out, workers=1, progress=False)
    assert again.rows == len(rows) and again.rows_this_run == 0
    score_dump(tmp_path / "model", demo_data["validation"], pooled, workers=1, progress=False, pool_by_image=True)
    assert json.loads((pooled / "_run.json").read_text(encoding="utf-8"))["settings"]["image_decoding"] == (
        IMAGE_DECODING + 1
    )


def test_a_run_stopped_while_pooling_by_picture_says_what_it_keeps_and_that_a_rerun_pools_scoring_no_row(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector, _ = pooling_detector(demo_data, tmp_path)
    out = tmp_path / "out"
    written = pool_parts.write_pooled

    def stopped_after_one(*args: object) -> None:
        written(*args)
        raise KeyboardInterrupt  # Ctrl-C once the first pooled part is written

    monkeypatch.setattr(pool_parts, "write_pooled", stopped_after_one)
    with pytest.raises(KeyboardInterrupt) as stopped:
        score_dump(detector, demo_data["validation"], out, workers=1, shard_rows=40, progress=False, pool_by_image=True)
    assert str(stopped.value) == (
        f"160 rows (4 parts) are scored and kept in {out / '_per_post'}: the same command pools them by picture, "
        f"scoring no row again (until then {out} may hold some of the pooled parts, not all)"
    )
    monkeypatch.setattr(pool_parts, "write_pooled", written)
    again = score_dump(
        detector, demo_data["validation"], out, workers=1, shard_rows=40, progress=False, pool_by_image=True
    )
    assert again.rows_this_run == 0 and len(list(out.glob("part-*.parquet"))) == 4


def test_a_component_defined_where_spawned_workers_cannot_import_it_is_refused_before_scoring_unless_workers_1(
    demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    import faim
    from faim import registry
    from faim.fusion import ConcatFusion

    monkeypatch.setattr(registry, "FUSIONS", dict(registry.FUSIONS))
    monkeypatch.setitem(registry.REGISTRIES, "fusion", registry.FUSIONS)
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # a notebook's: no file to import

    class SessionFusion(ConcatFusion):
        pass

    SessionFusion.__module__, SessionFusion.__qualname__ = "__main__", "SessionFusion"  # as a notebook defines it
    faim.register_fusion("session_fusion")(SessionFusion)
    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "session_fusion"},
        "heads": {"harmful": {"type": "binary", "labels": ["no", "yes"]}},
    }
    faim.build({"model": section}).save(tmp_path / "model")
    message = (
        r"^model.fusion: fusion 'session_fusion' is __main__.SessionFusion, defined in this interactive session, "
        r"which the spawned scoring worker processes cannot import: pass workers=1 to score in this process, or "
        r"define the class in a module they import$"
    )
    with pytest.raises(ValueError, match=message):
        score_dump(tmp_path / "model", demo_data["validation"], tmp_path / "out", workers=2, progress=False)
    assert not (tmp_path / "out").exists()  # refused before anything was written
    summary = score_dump(tmp_path / "model", demo_data["validation"], tmp_path / "out", workers=1, progress=False)
    assert summary.rows == summary.rows_this_run > 0


def test_a_run_pooling_by_a_picture_the_model_does_not_fuse_warns_of_no_post_as_holding_more_than_it_reads(
    demo_data: dict[str, Path], tmp_path: Path
) -> None:
    detector, _ = pooling_detector(demo_data, tmp_path, fused=["comments", "text"])
    detector.save(str(tmp_path / "model"))
    rows = [json.loads(line) for line in demo_data["validation"].read_text(encoding="utf-8").splitlines()][:20]
    rows[0]["images"] = [rows[0].pop("image")] * 12  # its first alone links it to others
    dump = demo_data["validation"].parent / "unfused-pictures.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        score_dump(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False, pool_by_image=True)


def test_a_saved_model_whose_label_would_share_its_tasks_decision_column_is_refused_before_any_row_is_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # saved before recipes refused a label named decision, it was loaded with a warning in each worker, which then
    # stopped at its first batch on pyarrow's "Could not convert 'decision' with type str: tried to convert to float32"
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    heads = {"severity": {"type": "multiclass", "labels": ["low", "decision"]}}
    with monkeypatch.context() as patched:
        patched.setattr(validate, "check_score_columns", lambda *_: None)
        faim.build({"model": section | {"heads": heads}}).save(tmp_path / "model")
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"id": "1", "text": "some words"}\n', encoding="utf-8")
    said = (
        f"{tmp_path / 'model'}: the output column 'severity.decision' would hold both the score of label 'decision' of "
        "task 'severity' and the decision of task 'severity', so faim score cannot write the model's scores: train it "
        "again with the task or label renamed, or score its posts with faim.load"
    )
    with pytest.raises(ValueError, match=re.escape(said)):
        score_dump(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False)
    with pytest.raises(ValueError, match=re.escape(said)):
        score_exported(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists()
    with pytest.warns(FaimWarning, match="'decision' gives the score column 'severity.decision'"):
        summary = score_dump(
            tmp_path / "model", dump, tmp_path / "out", workers=1, scores=False, embeddings=True, progress=False
        )
    assert summary.rows == 1
