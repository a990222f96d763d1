"""``score_exported``: a dump scored with an exported model (``faim export``) on ``faim.runtime``: the same parts,
manifest, resume and error rows as ``score_dump``, from processes that import neither torch nor transformers."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from faim.artifact_manifest import MANIFEST, fused_kinds, is_export, read_manifest, read_meta_fields
from faim.data.columns import ColumnMap
from faim.data.post import Post
from faim.runtime.bundle import EMBEDDING, ExportError, logits_name, probabilities_name
from faim.runtime.model import ExportedModel, checked_manifest
from faim.scoring.inputs import Shard
from faim.scoring.manifest import absolute_image_root, check_resumable, check_run_output, writing_run
from faim.scoring.output import check_output_columns, output_schema, output_table, score_columns, write_shard
from faim.scoring.report import ShardReport
from faim.scoring.rows import (
    ShardRows,
    readable_batches,
    set_aside_nonfinite,
    warn_overfull_in_run,
    warn_unheld_in_run,
)
from faim.scoring.runner import ScoreSummary, check_run_arguments, plan_run, run_shards
from faim.weights import sha256_file

EXPORT_DIR = "_export"
"""Folder, inside the output of a run given a saved model, of the model's export, in a folder named by the saved
model's digest (skipped by Parquet readers)."""


class ExportedShardScorer:
    """Scores shards with one exported model.

    Args:
        model: The export, loaded.
        columns: The dump's column mapping (recipe-style dict; ``None``: identity).
        image_root: Directory relative image paths resolve against (``None``: each file's folder).
        batch_size: Posts per run of the graphs.
        scores: Write per-task scores and decisions.
        embeddings: Write whole-post embeddings.
    """

    def __init__(
        self,
        model: ExportedModel,
        columns: dict | None,
        image_root: str | None,
        batch_size: int = 16,
        scores: bool = True,
        embeddings: bool = False,
    ) -> None:
        self.model = model
        self.columns = ColumnMap.from_recipe(columns)
        self.image_root = Path(image_root) if image_root else None
        self.batch_size = batch_size
        self.scores, self.embeddings = scores, embeddings
        self.schema = output_schema(model.tasks, scores, embeddings)

    def table(self, rows: ShardRows) -> pa.Table:
        """The output rows of one shard's rows read (``shard_posts``): one per input row."""
        errors = rows.errors
        scored: list[tuple[int, Post]] = []
        outputs = [
            self.model.run([elements for _, elements in read])
            for read in readable_batches(rows.posts, self.batch_size, self.model.read, errors, scored)
        ]
        columns: dict[str, list[Any]] = {}
        if outputs:
            merged = {name: np.concatenate([batch[name] for batch in outputs]) for name in outputs[0]}
            tasks = self.model.tasks if self.scores else []
            logits = {task.name: merged[logits_name(task.name)] for task in tasks}
            embeddings = merged[EMBEDDING] if self.embeddings else None
            kept = set_aside_nonfinite(scored, tasks, logits, errors, embeddings)
            merged = {name: values[kept] for name, values in merged.items()}
            if self.scores:
                probabilities = {task.name: merged[probabilities_name(task.name)] for task in self.model.tasks}
                columns = score_columns(self.model.tasks, self.model.decisions, probabilities)
            if self.embeddings:
                columns["embedding"] = merged[EMBEDDING].tolist()
        return output_table(self.schema, scored, columns, errors)

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        """Score ``shard`` into ``out_dir/part-<key>.parquet``, atomically (all rows or none)."""
        kinds = list(self.model.encoders)  # those its fusion reads: an export embeds no other
        limit = self.model.max_elements
        return write_shard(shard, out_dir, self.table, self.columns, self.image_root, kinds, limit, kinds)

    def close(self) -> None:
        """Nothing to give back: onnxruntime's threads belong to the sessions."""


@dataclass(frozen=True)
class ExportedScorers:
    """What each scoring process makes its ``ExportedShardScorer`` from (picklable; see
    ``faim.scoring.runner.Scorers``): the export loaded with the process's share of the cores as graph threads."""

    export_dir: str
    kwargs: dict[str, Any]
    device: str = "cpu"

    def __call__(self, threads: int) -> ExportedShardScorer:
        return ExportedShardScorer(ExportedModel(self.export_dir, threads=threads), **self.kwargs)


def score_exported(
    model: str | Path,
    source: str | Path,
    out: str | Path,
    columns: dict | None = None,
    image_root: str | None = None,
    workers: int | None = None,
    batch_size: int = 16,
    shard_rows: int | None = None,
    scores: bool = True,
    embeddings: bool = False,
    engine: str = "embedded",
    progress: bool = True,
    overwrite: bool = False,
) -> ScoreSummary:
    """Score every row of a dump with an exported model into Parquet parts under ``out``, as ``score_dump`` does
    with the saved model (same columns, decisions, error rows; rerun the same call to resume).

    Args:
        model: A folder written by ``faim export`` (its files' hashes are checked here and in every worker), or a
            saved model, exported first into ``out/_export`` (see ``export_once``).
        source, out, columns, image_root, workers, batch_size, shard_rows, scores, embeddings, engine, progress,
            overwrite: As for ``faim.scoring.engine.score_dump``.

    Raises:
        faim.runtime.ExportError: When ``model`` is neither a complete ONNX export nor a saved model that exports.
        faim.artifact_manifest.ArtifactError: When a saved model's ``faim.json`` is not a manifest.
        ValueError: On bad arguments, or ``out`` holding another run (refused before anything in ``out`` is
            removed or written).
        FileExistsError: When ``out`` holds files a scoring run does not write.
        NotADirectoryError, PermissionError: When ``out`` is a file, or a folder this user may not write into,
            refused before any work (``faim.scoring.manifest.check_run_output``).
        BlockingIOError: When another run is writing into ``out`` now (``faim.scoring.manifest.writing_run``).
    """
    check_run_arguments(workers, batch_size, shard_rows, engine, scores, embeddings)
    check_run_output(out)
    image_root = absolute_image_root(image_root)
    ColumnMap.from_recipe(columns)
    given = Path(model)
    settings = {"columns": columns, "image_root": image_root, "scores": scores, "embeddings": embeddings,
                "runtime": "onnx"}  # fmt: skip
    recorded = recorded_manifest(given)
    check_output_columns(given, recorded["tasks"], scores, embeddings)
    kinds = fused_kinds(given, recorded) if is_saved_model(given) else recorded["fusion"]["kinds"]
    fields = read_meta_fields(given, recorded)
    plan = plan_run(recorded, source, out, settings, shard_rows, kinds=kinds, meta_fields=fields)
    kwargs = {"columns": columns, "image_root": image_root, "batch_size": batch_size, "scores": scores,
              "embeddings": embeddings}  # fmt: skip
    with writing_run(Path(out)):
        check_resumable(Path(out), plan.identity, overwrite)  # before a saved model is exported into the folder
        export_dir = export_once(given, Path(out), overwrite)
        if export_dir != given:
            check_own_export(export_dir, given)
        summary = run_shards(
            ExportedScorers(str(export_dir), kwargs),
            plan,
            out,
            workers=workers,
            engine=engine,
            progress=progress,
            overwrite=overwrite,
        )
        warn_unheld_in_run(summary.held, source, summary.rows)
        warn_overfull_in_run(summary.held, source, summary.rows, kinds)
    return summary


def check_own_export(export_dir: Path, model: Path) -> None:
    """Check the export a run made of the saved model ``model`` in its output (``export_once``) as each worker's
    loading checks it, so that one damaged since is named here, not from inside each worker.

    Raises:
        ExportError: Naming what is wrong and what to do: remove the folder for the next run to export the model anew,
            keeping the parts scored (``--overwrite`` would score them again).
    """
    try:
        checked_manifest(export_dir)
    except ExportError as error:
        raise ExportError(
            f"{error} (the export of {model} a run made in this folder: remove {export_dir} and run again to export "
            "it anew; the parts scored are kept)"
        ) from None


def is_saved_model(model: Path) -> bool:
    """Whether ``model`` is a saved model (``faim train``'s) rather than an export (``faim export``'s)."""
    return not is_export(model) and (model / MANIFEST).is_file()


def recorded_manifest(model: Path) -> dict[str, Any]:
    """What a run of ``model`` is recorded with (its file hashes and tasks; ``faim.scoring.manifest.run_identity``):
    a saved model's ``faim.json`` (the saved model is what the run is, so a run of another one in the same folder is
    refused before anything is exported there), or an export's manifest, checked here as each worker's loading checks
    it (``checked_manifest``), so that a bad export is refused before anything is written.

    Raises:
        faim.artifact_manifest.ArtifactError: When the saved model's ``faim.json`` is not a manifest.
        faim.runtime.ExportError: When ``model`` is neither a saved model nor a complete export, is an export of
            graphs the runtime does not read (torch.export programs), or one whose manifest loading refuses.
    """
    if is_saved_model(model):
        return read_manifest(model)
    return checked_manifest(model)


def export_once(model: Path, out: Path, overwrite: bool = False) -> Path:
    """The export to score: ``model`` itself, or, for a saved model, its export in ``out/_export/DIGEST`` (the
    first 16 hex digits of the sha256 of the saved model's ``faim.json``, which lists every file of it by its own
    sha256), written by ``faim export`` in a process of its own (exporting needs torch; this process stays without
    it) unless an earlier run wrote it for the same saved model (``overwrite``: written again). Writing one removes
    the exports of other models there.

    Raises:
        ExportError: When exporting fails, with the exporter's last words.
    """
    if not is_saved_model(model):
        return model
    exports = out / EXPORT_DIR
    target = exports / sha256_file(model / MANIFEST)[:16]
    if overwrite or not is_export(target):
        for stale in exports.iterdir() if exports.is_dir() else ():
            if stale.is_dir() and stale != target:
                shutil.rmtree(stale)
            elif stale.is_file():
                stale.unlink()
        export_apart(model, target)
    return target


def export_apart(model: Path, target: Path) -> None:
    """Export the saved model ``model`` to ``target`` with ``faim export``, in a process of its own.

    Raises:
        ExportError: When exporting fails, with the exporter's last words.
    """
    command = [sys.executable, "-m", "faim", "export", str(model), "-o", str(target)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ExportError(f"{model}: exporting it for the onnx runtime failed: {last}")
