"""``score_dump``: stream a dump through a saved model, scored with torch, into Parquet parts, in parallel,
resumably (``faim.scoring.runner``); and pooled by picture afterwards where the model pools."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from faim.artifact import read_recipe
from faim.artifact_manifest import fused_kinds, read_manifest, read_meta_fields, verify_files
from faim.components import load_plugins, registries
from faim.data.columns import ColumnMap
from faim.detector import POOLING_KIND, Detector, check_pooling_switch
from faim.registry import defined_interactively, interactive_session, qualified_name
from faim.scoring.manifest import PER_POST_DIR, absolute_image_root, check_run_output, writing_run
from faim.scoring.options import ScoringOptions
from faim.scoring.output import check_output_columns
from faim.scoring.pool_parts import pool_parts
from faim.scoring.rows import warn_overfull_in_run, warn_unheld_in_run
from faim.scoring.runner import ScoreSummary, available_cores, check_run_arguments, kept, plan_run, run_shards
from faim.scoring.worker import TorchScorers


def scoring_device(device: str | torch.device | None) -> str:
    """The name of the device scoring runs the model on (``"cpu"``, ``"cuda"``, ``"cuda:1"``): ``device``'s, as a
    name, a ``torch.device`` or a CUDA index; ``None``: ``"cpu"``.

    Raises:
        ValueError: Unless ``device`` names a CPU or an available CUDA device.
    """
    if device is None:
        return "cpu"
    try:
        parsed = torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"device {device!r}: {error}") from None
    except TypeError:
        raise ValueError(f"device {device!r}: expected a device name such as 'cpu' or 'cuda'") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: no CUDA device is available to torch here")
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: scoring runs on 'cpu' or 'cuda'")
    return str(parsed)


@contextmanager
def model_directory(model: Detector | str | Path) -> Iterator[Path]:
    """A model directory workers can load: the path given, or the detector saved to a temporary one."""
    if not isinstance(model, Detector):
        yield Path(model)
        return
    with tempfile.TemporaryDirectory(prefix="faim-model-") as directory:
        model.save(str(Path(directory) / "model"))
        yield Path(directory) / "model"


def score_dump(
    model: Detector | str | Path,
    source: str | Path,
    out: str | Path,
    columns: dict | None = None,
    image_root: str | None = None,
    workers: int | None = None,
    batch_size: int = 16,
    shard_rows: int | None = None,
    options: ScoringOptions | None = None,
    scores: bool = True,
    embeddings: bool = False,
    engine: str = "embedded",
    progress: bool = True,
    overwrite: bool = False,
    device: str | torch.device | None = "cpu",
    pool_by_image: bool = False,
) -> ScoreSummary:
    """Score every row of a dump into Parquet parts under ``out``; rerun the same call to resume.

    Every scoring process decodes pictures with the decompression-bomb limit of the process calling this
    (``PIL.Image.MAX_IMAGE_PIXELS``; ``faim.data.images.pixel_limit`` sets one for a block), recorded in the settings
    of a run reading pictures where it is not Pillow's own, so that its resume with another limit is refused.

    Args:
        model: A model directory, or a ``Detector`` built from a recipe (saved to a temporary directory).
        source: A JSONL/CSV/TSV/Parquet file, a saved Hugging Face dataset folder, a folder of them, or a glob
            (``faim.data.inputs``).
        out: Output folder: ``part-*.parquet`` (read it whole with ``pyarrow.parquet.read_table(out)``); new, empty
            or an earlier run's.
        columns: Column mapping, as in a recipe's ``data.columns``.
        image_root: Directory relative image paths resolve against (default: each file's folder).
        workers: Processes that score, this one included (default: one per core, one torch thread each);
            1 scores in this process only. With ``engine="ray"``: Ray actors (default: one per CPU).
        batch_size: Posts per forward pass. 16 keeps a batch's activations small enough for the caches
            and for the allocator to reuse: MiniLM + EfficientNet-Lite0 on one core took 37 ms per post at
            16 against 42 (worker processes) to 56 (this process) at 64.
        shard_rows: Rows per shard (per part file, and per unit of restart); default: a thirty-second of
            the dump, between 32 and 1024 rows, so small dumps still spread evenly over the workers.
        options: Speed-ups; default ``ScoringOptions()``; ``ScoringOptions.exact()`` matches ``Detector.score``.
        scores: Write per-task scores and decisions.
        embeddings: Write whole-post embeddings (with ``scores`` off, a run writing nothing is refused).
        engine: ``"embedded"`` (this machine) or ``"ray"`` (Ray Data; needs ``faim-sdk[ray]``).
        progress: Show a progress bar with rows/s and ETA.
        overwrite: Delete an earlier run's parts in ``out`` instead of resuming it.
        device: Where workers run the model: ``"cpu"`` (``None`` too) or ``"cuda"``, by name or as a ``torch.device``
            (each embedded worker, or each Ray actor with one GPU of its own, ``num_gpus=1``); decoding and
            preprocessing stay on CPU cores.
        pool_by_image: Score the dump's posts together, as evaluation pools them (a recipe with
            ``eval.pool_by_image``): each post takes the mean logits of every post in the dump whose picture is a
            near-duplicate of its own, under the pooled calibration, and gains ``picture_group``. A second pass
            once every row is scored (``faim.scoring.pool_parts``); each post's own scores, logits and picture
            embedding stay in ``out/_per_post``. Pictures are read even when the heads do not see them.

    Raises:
        TypeError: On a ``pool_by_image`` that is not True or False (a cosine: ``faim.detector.check_pooling_switch``).
        ValueError: On bad arguments, a model that cannot pool, or ``out`` holding another run.
        FileExistsError: When ``out`` holds files a scoring run does not write.
        NotADirectoryError, PermissionError: When ``out`` is a file, or a folder this user may not write into,
            refused before any work (``faim.scoring.manifest.check_run_output``).
        BlockingIOError: When another run is writing into ``out`` now (``faim.scoring.manifest.writing_run``).
        faim.artifact.ArtifactError: When a file of the model was modified.
    """
    device = scoring_device(device)
    check_pooling_switch(pool_by_image)
    check_run_arguments(workers, batch_size, shard_rows, engine, scores, embeddings)
    check_run_output(out)
    image_root = absolute_image_root(image_root)
    if pool_by_image and not scores:
        raise ValueError("pool_by_image pools scores: it cannot be used when only embeddings are written")
    options = options or ScoringOptions()
    settings = {"columns": columns, "image_root": image_root, "options": options.to_dict(), "scores": scores,
                "embeddings": embeddings}  # fmt: skip
    if pool_by_image:  # named only when set: the identity of a run that does not pool stays what it was
        settings["pool_by_image"] = True
    scorer_kwargs = {"columns": columns, "image_root": image_root, "options": options, "batch_size": batch_size,
                     "scores": scores, "embeddings": embeddings, "pool_by_image": pool_by_image}  # fmt: skip
    ColumnMap.from_recipe(columns)  # a bad mapping or model is named here, not from inside each worker
    load_plugins()  # so is a plug-in that fails to load: once, here, where the workers keep quiet about it
    with model_directory(model) as model_dir:
        manifest = read_manifest(model_dir)
        verify_files(model_dir, manifest)
        check_output_columns(model_dir, manifest["tasks"], scores, embeddings, pool_by_image)
        if engine == "ray" or (workers or available_cores()) > 1:
            refuse_components_workers_cannot_import(model_dir)
        detector = None
        if pool_by_image:
            detector = model if isinstance(model, Detector) else Detector.load(str(model_dir))
            detector.check_pooling()  # refused before any row is scored
        # what the run reads: the kinds its model fuses, and the picture posts are pooled by (its first alone)
        fused = fused_kinds(model_dir, manifest)
        kinds = sorted({*fused, *([POOLING_KIND] if pool_by_image else [])})
        fields = read_meta_fields(model_dir, manifest)
        plan = plan_run(manifest, source, out, settings, shard_rows, kinds=kinds, meta_fields=fields)
        with writing_run(Path(out)):
            summary = run_shards(
                TorchScorers(str(model_dir), device, scorer_kwargs),
                plan,
                out,
                workers=workers,
                engine=engine,
                progress=progress,
                overwrite=overwrite,
                per_post=pool_by_image,
            )
            warn_unheld_in_run(summary.held, source, summary.rows)
            warn_overfull_in_run(summary.held, source, summary.rows, fused)
            if detector is not None:
                start = time.perf_counter()
                try:
                    summary.pooling = pool_parts(detector, Path(out) / PER_POST_DIR, Path(out), progress)
                except KeyboardInterrupt as error:
                    raise KeyboardInterrupt(pooling_stopped(summary)) from error
                summary.seconds += time.perf_counter() - start
    return summary


def refuse_components_workers_cannot_import(model_dir: Path) -> None:
    """Refuse, before anything is read or written, a saved model whose components include a class defined in an
    interactive session (a notebook, ``python -c``): its ``__main__`` has no file, so the worker processes, which are
    spawned and load the model anew, cannot import the class, and would fail as they start.

    Raises:
        ValueError: Naming the component's recipe path, its type and class, and the remedies.
    """
    if not interactive_session():
        return  # no class can be defined interactively: the recipe is not read
    model = read_recipe(model_dir).model
    specs = [("model.fusion", "fusion", model["fusion"])]
    specs += [(f"model.heads.{name}", "head", spec) for name, spec in model["heads"].items()]
    for kind, spec in model["encoders"].items():
        members = spec if isinstance(spec, list) else [spec]  # a stack's; a string routes to another kind's encoder
        specs += [(f"model.encoders.{kind}", "encoder", member) for member in members if isinstance(member, dict)]
    for path, kind, spec in specs:
        cls = registries()[kind][spec["type"]]
        if defined_interactively(cls):
            raise ValueError(
                f"{path}: {kind} {spec['type']!r} is {qualified_name(cls)}, defined in this interactive session, "
                "which the spawned scoring worker processes cannot import: pass workers=1 to score in this process, "
                "or define the class in a module they import"
            )


def pooling_stopped(summary: ScoreSummary) -> str:
    """What a run stopped (Ctrl-C) while pooling by picture (``summary`` its first pass, every row scored) says it
    keeps: every row's own scores, in its per-post parts, and that the same command pools them again, whole, scoring
    no row; the pooled parts written so far are not all of them until then."""
    out = Path(summary.output)
    rerun = "the same command pools them by picture, scoring no row again"
    rerun += f" (until then {out} may hold some of the pooled parts, not all)"
    return kept(summary.rows, summary.shards, out / PER_POST_DIR, rerun)
