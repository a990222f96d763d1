"""``fit(recipe)``: data → model → Lightning fit → calibration → saved artifact.

Evaluating the saved model and writing the run's ``train_record.json`` come after (``faim.api.train``, which
``faim train`` and ``faim.train`` run): evaluation sits above the core.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint, Timer
from pytorch_lightning.loggers import CSVLogger, TensorBoardLogger
from pytorch_lightning.strategies import DDPStrategy, Strategy
from pytorch_lightning.utilities.exceptions import MisconfigurationException, SIGTERMException
from torch.utils.data import DataLoader

from faim.artifact import MANIFEST, read_manifest
from faim.artifact_manifest import RUN_MODEL
from faim.assembly import recipe_fused_kinds, task_specs
from faim.calibration.crowd import LEVEL as CORRECTION_LEVEL
from faim.calibration.fit import Calibration
from faim.calibration.scaling import temperature_edge
from faim.data.collate import post_targets
from faim.data.elements import refuse_nothing_read, warn_overfull_splits
from faim.data.language import with_languages
from faim.data.post import Post, post_name, post_texts, refuse_no_posts, warn_labels_of_no_task
from faim.data.preflight import refuse_unevaluable, refuse_unreadable, warn_shared_ids, warn_source_splits
from faim.data.sources import check_split
from faim.data.targets import TaskSpec, refuse_flag_rows
from faim.detector import Detector
from faim.folders import check_folder_path, check_replaceable
from faim.inference import predict
from faim.model import WholePostModel
from faim.notices import warn
from faim.recipe import Recipe
from faim.recipe.compare import plain
from faim.recipe.errors import RecipeError
from faim.recipe.validate import check_monitor_mode, check_shift_with_temperature, check_source_tasks
from faim.registry import ELEMENT_MODALITIES
from faim.training.augment import HiddenAugmentationError, PostAugmenter, refuse_hidden_augmentation
from faim.training.cache import encoding_in_isolation
from faim.training.epochs import TrainerEpochs
from faim.training.loaders import make_loader, posts_encoded, sources_balanced
from faim.training.module import SCORES_NOT_SYNCED, PostTask
from faim.training.run_recipe import check_resumable, epochs_to_train, save_run_recipe, trains_more
from faim.training.versions import latest_checkpoint, next_version
from faim.wording import plural, shell_path


@dataclass
class FittedRun:
    """What fitting a recipe produced, and what evaluating it needs.

    Attributes:
        detector: The trained, calibrated model (saved to ``model_dir``).
        recipe: The resolved recipe it trained with.
        model_dir: Where it was saved.
        best_checkpoint: The checkpoint its weights come from.
        eval_loader: A loader over the recipe's ``eval.split`` (the validation loader when that split is
            validation, so its cached embeddings are read once).
        eval_data: Where that split comes from, for reports.
        eval_texts: Each post's text in that loader, in its order (for the words the model and the labels read the
            opposite way, ``faim.eval.label_conflicts``).
        resumed_from: The checkpoint a resumed run started from, or ``None``.
        fit_seconds_before: The fitting time that checkpoint carried from before the interruption.
        posts_encoded: How many training, validation and evaluated posts the frozen encoders encoded, the rest
            read from the embedding cache; ``None`` where nothing is cached (every encoder reads every batch).
    """

    detector: Detector
    recipe: Recipe
    model_dir: Path
    best_checkpoint: str
    eval_loader: DataLoader
    eval_data: str
    eval_texts: list[str]
    resumed_from: Path | None
    fit_seconds_before: float
    posts_encoded: int | None


RECORD = "train_record.json"


def write_record(run: FittedRun, output_dir: Path, seconds: float) -> dict[str, Any]:
    """Write ``<output_dir>/train_record.json``: the resolved recipe, the sha256 of the saved weights, the
    training wall time, how many posts the frozen encoders encoded in it (``FittedRun.posts_encoded``) and when it
    finished, so a later reader can tell whether the model there is still the one this run trained, and whether
    its time includes embedding the posts.

    ``train_seconds`` is ``seconds``, the run's wall time (data, embedding unless cached, fitting, calibration,
    evaluation: ``faim.api.train`` measures it), plus, for a run resumed from a checkpoint, the fitting time that
    checkpoint carried from the run it continues (``run.fit_seconds_before``; its data loading and the epoch cut
    short are not counted).
    """
    earlier = run.fit_seconds_before
    record = {
        "recipe": plain(run.recipe),
        "weights_sha256": read_manifest(run.model_dir)["files"]["model.safetensors"],
        "train_seconds": seconds + earlier,
        "posts_encoded": run.posts_encoded,
        "resumed_from": str(run.resumed_from) if run.resumed_from else None,
        "fit_seconds_before_resume": earlier,
        "trained_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    (output_dir / RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def fit_seconds_before(timer: Timer) -> float:
    """The fitting time ``timer`` took over from the checkpoint a resumed fit started from (0 for a new run)."""
    start, end = timer.start_time(), timer.end_time()
    return timer.time_elapsed() - (end - start if start is not None and end is not None else 0.0)


def look_for_unused_parameters(strategy: Strategy) -> None:
    """Make ``strategy``, the one Lightning picked for a recipe's ``train.strategy`` (DDP for ``"auto"`` on several
    CPUs or GPUs), look for parameters a batch leaves without a gradient where it is DDP and the recipe did not say
    whether it should (``ddp_find_unused_parameters_false`` is kept): absent-element vectors and per-kind layers get
    none in batches where every post has (or lacks) that kind, and DDP stops at them unless it looks. Any other
    strategy (one device, XLA on TPUs, FSDP) is left as Lightning made it."""
    if type(strategy) is DDPStrategy:  # not its subclasses (XLA, DeepSpeed), which read no such setting
        strategy._ddp_kwargs.setdefault("find_unused_parameters", True)  # what DistributedDataParallel is given


def make_trainer(
    recipe: Recipe,
    output_dir: Path,
    version: int,
    checkpoint_dir: Path,
    max_epochs: int | None = None,
    logged: bool = True,
) -> tuple[pl.Trainer, ModelCheckpoint, Timer]:
    """A Trainer training up to ``max_epochs`` epochs (``None``: ``train.max_epochs``), saving the best and last
    checkpoints to ``checkpoint_dir`` and logging to ``logs/version_<version>`` and ``tensorboard/version_<version>``
    under ``output_dir`` (no log at all where not ``logged``: a resumed run that trains nothing writes no empty log
    folder, nor takes a version number); returns it with the best-checkpoint callback and a
    ``Timer``, whose fitting time the checkpoints carry, so that a resumed run counts the time before it.

    ``last.ckpt`` is written by a callback of its own after every epoch: Lightning's ``save_last`` writes it only
    when a best checkpoint is saved, so it would keep the last improvement, not the last epoch, for ``--resume``.
    It comes after the best-checkpoint callback, so it holds that callback's state from the same epoch.
    Lightning picks the strategy ``train.strategy`` names (``"auto"`` as it picks it), a DDP one made to look for
    unused parameters (``look_for_unused_parameters``).

    Raises:
        RecipeError: Naming the recipe's ``train`` settings Lightning refuses on this machine (an accelerator it
            lacks, a strategy it cannot run or has no package for) and Lightning's reason; a value Lightning takes
            on no machine is refused with the recipe (``faim.recipe.validate``).
    """
    cfg = recipe.train
    checkpoint = ModelCheckpoint(dirpath=checkpoint_dir, monitor=cfg.monitor, mode=cfg.mode, save_top_k=1)
    last = ModelCheckpoint(dirpath=checkpoint_dir, filename="last", enable_version_counter=False)
    timer = Timer()
    try:
        trainer = pl.Trainer(
            max_epochs=cfg.max_epochs if max_epochs is None else max_epochs,
            accelerator=cfg.accelerator,
            devices=cfg.devices,
            strategy=cfg.strategy,
            precision=cfg.precision,
            callbacks=[
                timer,
                checkpoint,
                last,
                EarlyStopping(monitor=cfg.monitor, mode=cfg.mode, patience=cfg.patience),
            ],
            logger=[
                CSVLogger(output_dir, name="logs", version=version),
                TensorBoardLogger(output_dir, name="tensorboard", version=version),
            ]
            if logged
            else False,
            log_every_n_steps=cfg.log_every_n_steps,
            default_root_dir=output_dir,
            deterministic=True,
            enable_model_summary=False,
        )
    except (MisconfigurationException, ValueError, ImportError) as error:
        settings = ", ".join(
            f"{name}={getattr(cfg, name)!r}" for name in ("accelerator", "devices", "strategy", "precision")
        )
        raise RecipeError(recipe.source, "train", f"this machine cannot train with {settings}: {error}") from None
    look_for_unused_parameters(trainer.strategy)
    return trainer, checkpoint, timer


def check_learnable(tasks: list[TaskSpec], posts: list[Post], name: str, kinds: list[str], limit: int) -> None:
    """Refuse a training split (``name``) a model cannot learn from: one without posts, one holding posts the model
    reading ``kinds`` (at most ``limit`` elements of each) would stop at (``refuse_unreadable``: a text or comment that
    is not text, a picture that is not there; those holding more than it reads are warned of with the other splits,
    ``warn_overfull_splits``), one none of whose posts
    holds an element of ``kinds`` (as where its columns are not mapped), or one without a label for a task (saying how
    to drop its head where another task's labels are there, how to map the labels' columns where no task's are);
    warn of labels under a name no task has (``warn_labels_of_no_task``), of one whose labelled posts of a binary or
    multiclass task are of one class (a model learns nothing of the others from it, as a fold holding out a group may
    be meant to show), and, once a task, of the labels of a multiclass or multilabel task its labelled posts hold none
    of (a class list with a misspelt name, say).

    Raises:
        ValueError: Naming the split and the task, the kinds, or the posts naming a picture that is not there; a
            ``PostError`` naming the post and its field.
    """
    refuse_no_posts(posts, name)
    refuse_unreadable(posts, kinds, limit, name, fused=None)
    refuse_nothing_read(posts, kinds, name, "map the columns that hold them (data.columns in the recipe)")
    warn_labels_of_no_task(posts, [task.name for task in tasks], name)
    refuse_flag_rows(tasks, posts, name)
    if len(tasks) > 1 and not any(post.labels.get(task.name) is not None for post in posts for task in tasks):
        raise ValueError(
            f"{name}: no post carries a label for any task ({', '.join(task.name for task in tasks)}); map the "
            "columns that hold them (data.columns.labels in the recipe: {TASK: COLUMN}), or point data.train at "
            "labelled posts"
        )
    for task in tasks:
        if not any(post.labels.get(task.name) is not None for post in posts):
            head = f"model.heads.{task.name}"
            drop = f"{head}: null in a recipe with a base:, or --set {head}=null"
            others = f"; to train the other heads alone, drop it: {drop}" if len(tasks) > 1 else ""
            raise ValueError(f"{name}: no post carries a label for task {task.name!r}{others}")
        held = labelled_classes(task, posts)
        if task.type != "multilabel" and len(held) < 2:
            message = f"{name}: every labelled post of task {task.name!r} is of one class ({held.pop()})"
            warn(f"{message}; the model learns nothing of the others")
        elif unheld := [label for label in task.labels if label not in held]:
            listed = ", ".join(map(repr, unheld))
            warn(
                f"{name}: no labelled post of task {task.name!r} holds {plural(len(unheld), 'label')} of its "
                f"{len(task.labels)} ({listed}); its head can never learn {'it' if len(unheld) == 1 else 'them'}"
                f" (misspelt in model.heads.{task.name}.labels?)"
            )


UNLABELLED_VALIDATION = "label the validation posts, or point data.validation at labelled ones"
"""What to do about a validation split none of whose posts carries a label, which training would find only once it
had trained and saved the model (calibration needs labels), as ``fit`` ends its error (``evaluated_posts``)."""


UNCALIBRATED_MULTILABEL = (
    " (a multilabel task is calibrated on no labels: its probabilities are its head's sigmoid, each label decided at "
    "0.5)"
)
"""What a warning of a multilabel task's validation labels adds: no temperature or threshold is fitted for it,
whatever they hold (``faim.calibration.fit.fit_calibration``)."""


def warn_uncalibrated(tasks: list[TaskSpec], posts: list[Post], name: str) -> None:
    """Warn of a binary task whose labelled posts in a validation split (``name``) are none or of one class: it keeps
    a temperature of 1 and its default threshold (``fit_calibration``), as a fold holding out a group may be meant
    to; and of a task of another type none of whose posts carries a label, which a report of these posts leaves out
    (a multiclass task keeps a temperature of 1; a multilabel one is calibrated on no labels)."""
    for task in tasks:
        if task.type != "binary" and all(post.labels.get(task.name) is None for post in posts):
            kept = "" if task.type == "multilabel" else "it keeps a temperature of 1, and "
            warn(
                f"{name}: no post carries a label for task {task.name!r}; {kept}a report of these posts has no "
                f"figures for it{UNCALIBRATED_MULTILABEL if task.type == 'multilabel' else ''}"
            )
        elif task.type == "binary" and len(classes := labelled_classes(task, posts)) < 2:
            held = f"of one class ({classes.pop()})" if classes else "none"
            warn(
                f"{name}: the labelled posts of task {task.name!r} are {held}; it keeps a temperature of 1 and its "
                "default threshold"
            )


def warn_undefined_auroc(tasks: list[TaskSpec], posts: list[Post], name: str) -> None:
    """Warn of a multiclass or multilabel task some of whose posts in a validation split (``name``) carry a label
    but whose AUROC is undefined there (``undefined_auroc``), as training logs it NaN every epoch; a binary task so
    left, and a task of any type none of whose posts carries a label, are ``warn_uncalibrated``'s to warn of."""
    for task in tasks:
        if task.type == "binary" or all(post.labels.get(task.name) is None for post in posts):
            continue
        if why := undefined_auroc(task, posts):
            warn(
                f"{name}: val/{task.name}/auroc is undefined ({why}) and logged NaN; val/{task.name}/macro_f1 is "
                "defined"
            )


def warn_temperature_edges(calibration: Calibration, name: str) -> None:
    """Warn of each task whose temperature fitted on a validation split (``name``) lies at an edge of the range the fit
    searches (``temperature_edge``), as ``faim calibrate`` says it: the split's labels of it are too few, or its
    scores barely rank them, and its probabilities are pressed to 0 and 1 or to the middle."""
    for task, temperature in calibration.temperatures.items():
        if edge := temperature_edge(temperature):
            warn(f"{name}: task {task!r}: temperature {temperature:.3f}, {edge}")


def undefined_auroc(task: TaskSpec, posts: list[Post]) -> str | None:
    """Why ``task``'s AUROC over ``posts`` (its labelled ones) is undefined, as training logs it: a class of a binary
    or multiclass task no post is of, or a label of a multilabel task every post or none carries; ``None`` where it
    is defined.

    Raises:
        PostError: Naming the post, as loading it would, whose label the task does not know.
    """
    if task.type == "multilabel":
        targets = [post_targets(post, [task])[task.name] for post in posts if post.labels.get(task.name) is not None]
        for index, label in enumerate(task.labels):
            held = {target[index] for target in targets}
            if len(held) < 2:
                return f"{'every' if held == {1.0} else 'no'} labelled post carries label {label!r}"
        return None
    present = labelled_classes(task, posts)
    missing = [label for label in task.labels if label not in present]
    return f"no labelled post is of class {missing[0]!r}" if missing else None


def labelled_classes(task: TaskSpec, posts: list[Post]) -> set[str]:
    """The classes, by label name, that the labelled ``posts`` of a binary or multiclass ``task`` are of, or the labels
    of a multilabel ``task`` one of them carries, each label read as loading reads it (``post_targets``): ``1``,
    ``"1"``, ``1.0``, ``true`` and ``"yes"`` are one class of a binary task, whatever its labels are named.

    Raises:
        PostError: Naming the post, as loading it would, whose label the task does not know.
    """
    targets = [post_targets(post, [task])[task.name] for post in posts if post.labels.get(task.name) is not None]
    if task.type == "multilabel":
        return {label for target in targets for label, hot in zip(task.labels, target, strict=True) if hot}
    return {task.labels[int(target)] for target in targets}


def check_monitor_defined(recipe: Recipe, tasks: list[TaskSpec], posts: list[Post], name: str) -> None:
    """Refuse a ``train.monitor`` of a task's AUROC (``val/TASK/auroc``) that is undefined on the validation split
    (``name``, its ``posts``): logged NaN, it would end training after its first epoch (early stopping stops at a
    figure that is not finite) and keep that epoch, without a word.

    Raises:
        RecipeError: Naming ``train.monitor``, the split, why the figure is undefined and what to monitor instead.
    """
    for task in tasks:
        if recipe.train.monitor == f"val/{task.name}/auroc" and (why := undefined_auroc(task, posts)):
            raise RecipeError(
                recipe.source,
                "train.monitor",
                f"{recipe.train.monitor} is undefined on {name}: {why}, so training would stop after its first "
                f"epoch; monitor val/loss or val/{task.name}/macro_f1, or give the validation split posts that "
                "define it",
            )


UNLABELLED_EVAL_SPLIT = (
    "label its posts (the recipe's data.columns maps a column to each task: labels: {TASK: COLUMN}), or set "
    "eval.split to a split whose posts are labelled"
)
"""What to do about the split a recipe's ``eval.split`` names none of whose posts carries a label, as
``evaluated_posts`` ends its error."""


def evaluated_posts(
    recipe: Recipe,
    posts: list[Post],
    name: str,
    detector: Detector | None = None,
    remedy: str = UNLABELLED_EVAL_SPLIT,
) -> list[Post]:
    """The posts of a recipe's split (``name``, as its source describes it) as evaluation reads them, refused first
    where the evaluation of the model could not finish (``refuse_unevaluable``, ending in ``remedy`` where none
    carries a label): with ``eval.languages`` (or ``eval.slice: lang``), each without ``meta.lang`` given the language
    it is written in (``faim.data.language``).

    The model is ``detector`` where given, its own tasks, kinds and ``max_elements`` checked: a saved model's, which
    differ from the recipe's where the recipe was edited since it trained. Without it, the model the recipe builds
    (its heads, encoders and ``train.max_elements``), checked before it is built as training checks it: the posts
    holding more pictures or comments than it reads are warned of with the other splits (``warn_overfull_splits``).

    Raises:
        PostError: Naming the first post whose text or a comment the model reads holds half of a UTF-16 surrogate
            pair.
        ValueError: Naming ``name`` and the tasks where no post carries a label, or how many posts name a picture the
            model reads that is not there, and the first.
    """
    if detector is None:
        heads, encoders = list(recipe.model["heads"]), list(recipe.model["encoders"])
        refuse_flag_rows(task_specs(recipe.model), posts, name)
        refuse_unevaluable(posts, heads, encoders, recipe.train.max_elements, name, remedy, fused=None)
    else:
        detector.refuse_unevaluable(posts, name, remedy)
    return with_languages(posts) if recipe.eval.detects_languages else posts


def eval_split_name(source: Any, split: str) -> str:
    """The split ``eval.split`` names, as checks of its posts name it: as its source describes it, and whose it is."""
    return f"{source.describe(split)} (eval.split {split!r})"


def recipe_loader(
    recipe: Recipe, detector: Detector, posts: list[Post], shuffle: bool, label: str, augment: bool = False
) -> DataLoader:
    """A loader over labelled ``posts`` with the recipe's batch size and workers; frozen encoders' embeddings come
    from the recipe's embedding cache unless ``train.cache_embeddings`` is off. With ``augment`` (the training
    loader), posts are perturbed as ``train.augment`` says; with ``shuffle`` (the training loader), drawn as
    ``train.balance`` says. What it draws at random comes from ``train.seed`` and the epoch (``make_loader``), alike
    with any ``train.num_workers``.

    Raises:
        HiddenAugmentationError: When ``train.augment`` perturbs an input the model does not read, or the input of a
            kind whose embeddings are cached (``make_loader``; training refuses it first, ``check_augmentation``).
    """
    cfg = recipe.train
    cache_dir = cfg.cache_dir if cfg.cache_embeddings else None
    augmenter = PostAugmenter(cfg.augment) if augment and cfg.augment else None
    sampler = sources_balanced(posts, cfg.seed) if shuffle and cfg.balance == "sources" else None
    collator = detector.collator(with_targets=True)
    return make_loader(
        detector.model,
        collator,
        posts,
        cfg.batch_size,
        shuffle,
        cfg.num_workers,
        cache_dir,
        label,
        augmenter,
        sampler,
        cfg.seed,
    )


def check_augmentation(recipe: Recipe, model: WholePostModel) -> None:
    """Refuse a ``train.augment`` that ``model`` would never see: one perturbing an input it does not read, or the
    input of a kind whose embeddings the recipe caches (``refuse_hidden_augmentation``). It needs the model built,
    for which encoders are frozen, but no post.

    Raises:
        RecipeError: Naming ``train.augment`` and the perturbations or kinds.
    """
    cfg = recipe.train
    if not cfg.augment:
        return
    cached = model.frozen_kinds if cfg.cache_embeddings else []
    try:
        refuse_hidden_augmentation(PostAugmenter(cfg.augment), model.kinds_with(None), cached)
    except HiddenAugmentationError as error:
        raise RecipeError(recipe.source, "train.augment", str(error)) from None


def check_cache_folder(recipe: Recipe, model: WholePostModel) -> None:
    """Refuse a ``train.cache_dir`` the embeddings of ``model``'s frozen encoders could not be written to (a file, or
    a folder inside one: ``check_folder_path``), where the recipe caches them, before a post is read or embedded,
    where writing the first split's would fail once its posts were embedded.

    Raises:
        RecipeError: Naming ``train.cache_dir`` and the file.
    """
    cfg = recipe.train
    if not (cfg.cache_embeddings and model.frozen_kinds):
        return
    try:
        check_folder_path(Path(cfg.cache_dir).expanduser())
    except NotADirectoryError as error:
        raise RecipeError(recipe.source, "train.cache_dir", str(error)) from None


def warn_workers_idle(recipe: Recipe, model: WholePostModel) -> None:
    """Warn, where ``train.num_workers`` is above 0 and the recipe caches the embeddings of ``model``'s frozen
    encoders while others train, that the kinds those others read are read and preprocessed in the training process,
    batch by batch, not in worker processes: the training loader reads the cache (``make_loader``), and the workers
    embed only the posts not cached yet. A post's metadata (a ``meta`` encoder's), which is read as the post is,
    with nothing to decode, costs nothing read so, and is not warned of."""
    cfg = recipe.train
    cached = model.frozen_kinds if cfg.cache_embeddings else []
    live = [kind for kind in model.kinds if kind not in cached and ELEMENT_MODALITIES[kind] != "meta"]
    if cfg.num_workers > 0 and cached and live:
        read = "whose encoder trains, is" if len(live) == 1 else "whose encoders train, are"
        warn(
            f"{recipe.source}: train.num_workers: {cfg.num_workers}: the embeddings of {', '.join(cached)} come from "
            f"the cache (train.cache_embeddings), so {', '.join(live)}, {read} read and "
            "preprocessed in the training process, not in worker processes, which embed only the posts not cached "
            "yet; set train.cache_embeddings: false to read every kind in the workers (the frozen encoders then run "
            "every epoch), or train.num_workers: 0"
        )


def check_correction_groups(recipe: Recipe, train_posts: list[Post]) -> None:
    """Before training: every training post has the ``Post.meta`` field ``eval.crowd_corrections`` groups them by,
    and it takes at least two values (the weight is cross-validated over them).

    Raises:
        ValueError: Naming the first training post without it (``post_name``), or the one value all of them hold.
    """
    field_name = recipe.eval.crowd_corrections
    missing = next((post for post in train_posts if post.meta.get(field_name) is None), None)
    if missing is not None:
        raise ValueError(
            f"{post_name(missing.origin, missing.id)}: eval.crowd_corrections groups the training posts by "
            f"meta.{field_name}, which this post lacks"
        )
    values = {str(post.meta[field_name]) for post in train_posts}
    if len(values) < 2:
        raise ValueError(
            f"eval.crowd_corrections: every training post has meta.{field_name} = {next(iter(values), None)!r}; "
            "the weight is cross-validated over at least two groups"
        )


def crowd_correction_weights(recipe: Recipe, detector: Detector, train_posts: list[Post]) -> dict[str, float]:
    """Each binary task's weight of the crowd's corrections in calibrated pooled logits (``eval.crowd_corrections``),
    fitted on the trained model's training posts by cross-validation over the groups of that ``Post.meta`` field
    (``Detector.correction_weights``), and printed."""
    field_name = recipe.eval.crowd_corrections
    loader = recipe_loader(recipe, detector, train_posts, False, "train")
    predictions = predict(
        detector.model, loader, desc="predicting the training posts", link_kind=detector.pooling_kind, embeddings=True
    )
    folds = [meta[field_name] for meta in predictions.meta]
    weights = detector.correction_weights(predictions, folds, CORRECTION_LEVEL)
    for task, weight in weights.items():
        verdict = f"weigh {weight:.3f} (calibrated logits per unit of evidence)"
        if not weight:
            verdict = f"weigh nothing (the test at {CORRECTION_LEVEL:.0%} finds no sign that they carry over)"
        print(f"{task}: the crowd's corrections {verdict}, fitted across {len(set(folds))} groups of meta.{field_name}")
    return weights


def stopping_signal(stop: SystemExit) -> signal.Signals | None:
    """The signal that ended Lightning's fit with ``stop``: SIGTERM (its ``SIGTERMException``, a SystemExit without
    a status, so the process would end as if it had succeeded) or SIGINT (Ctrl-C: it ends with status 1 while
    handling the KeyboardInterrupt); ``None`` for any other exit."""
    if isinstance(stop, SIGTERMException):
        return signal.SIGTERM
    if isinstance(stop.__context__, KeyboardInterrupt):
        return signal.SIGINT
    return None


RESUME_CALL = "the same call with resume=True"
"""How a run started from Python is resumed, as the message on its stop by a signal says."""


def stopped_run(resume_hint: str) -> str:
    """What a message of a run stopped by a signal names as stopped: ``faim.train`` for a run started from Python
    (which ``RESUME_CALL`` resumes), no command having been run, else ``faim train``, whose command line is the
    hint."""
    return "faim.train" if resume_hint == RESUME_CALL else "faim train"


def resume_option(resume_hint: str) -> str:
    """How a message names what asked a run to resume: ``resume=True`` where it was started from Python (which
    ``RESUME_CALL`` resumes), else ``faim train``'s ``--resume``."""
    return "resume=True" if resume_hint == RESUME_CALL else "--resume"


def stop_for_signal(stopped_by: signal.Signals, checkpoint_dir: Path, resume_hint: str) -> NoReturn:
    """End training stopped by a signal, saying that ``resume_hint`` (what resumes this run) continues from the run's
    ``last.ckpt`` where an epoch finished.

    Raises:
        SystemExit: For SIGTERM, with the status a shell gives it (143).
        KeyboardInterrupt: For SIGINT (Ctrl-C), as Python gives it (``faim train`` ends with status 130).
    """
    last = checkpoint_dir / "last.ckpt"
    resume = f"{resume_hint} continues from {last}" if last.is_file() else "no epoch finished"
    said = f"stopped by {stopped_by.name} before it saved a model; {resume}"
    print(f"{stopped_run(resume_hint)}: {said}", file=sys.stderr)
    if stopped_by == signal.SIGINT:
        raise KeyboardInterrupt from None
    raise SystemExit(128 + stopped_by) from None


def say_evaluation_stopped(model_dir: Path, report_dir: Path, resume_hint: str) -> None:
    """Say, as Ctrl-C stops the evaluation of the model a run saved in ``model_dir``, that the model is saved but its
    report (``report_dir``, saying where that holds files, an earlier model's report or part of one) and its
    ``train_record.json`` are not, and that ``resume_hint`` (what resumes the run, which trains no more and writes
    them) writes them."""
    earlier = " (what it holds is not this model's)" if report_dir.is_dir() and any(report_dir.iterdir()) else ""
    print(
        f"{stopped_run(resume_hint)}: stopped by SIGINT while evaluating the model it saved, {shell_path(model_dir)}; "
        f"its report, {shell_path(report_dir)}{earlier}, and {RECORD} are not written; {resume_hint} writes them",
        file=sys.stderr,
    )


def restore_interrupt_handler(handler: Any) -> None:
    """Put back the SIGINT handler training started with, which Lightning leaves ignored after a Ctrl-C (where
    signals can be handled: the main thread, a handler set from Python)."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


def fit(recipe: Recipe, resume: bool = False, resume_hint: str = RESUME_CALL) -> FittedRun | None:
    """Train the model a recipe describes, calibrate it on the validation split and save it to
    ``<train.output_dir>/model`` with its recipe.

    Returns ``None`` in the non-zero ranks of a multi-process (DDP) run; rank 0 returns the run.
    Each run takes the next number ``N`` in ``output_dir`` (see ``faim.training.versions``): checkpoints go to
    ``<output_dir>/checkpoints/version_N``, logs to ``logs/version_N`` and ``tensorboard/version_N``. With
    ``resume``, training continues from the ``last.ckpt`` of the latest run that saved one, writing its
    checkpoints beside it (so its best checkpoint is still chosen among all of that run's epochs) and its logs to
    a new number (Lightning's CSV logger would erase the metrics logged before the interruption); a run early
    stopping ended trains no more, and its model is written (``epochs_to_train``). Each run saves
    its resolved recipe beside its checkpoints, and a resumed run must match it but for how long it trains, where
    it runs and the ``eval`` section (``faim.training.run_recipe``). A run stopped by a signal says that
    ``resume_hint`` resumes it (``faim train`` gives its own command line, with ``--resume``).

    Raises:
        RecipeError: When the recipe has no ``data:`` section, or its ``train.mode`` would keep the epoch where
            ``train.monitor`` is worst (``check_monitor_mode``); before reading data, when the data source's
            constructor refuses an argument; before reading posts, when the data has no train or validation split
            or none of the name ``eval.split`` gives (naming the key and the splits it has), when a model
            component's constructor refuses an argument (naming the recipe's file, ``Recipe.building``; the model is
            built from the recipe alone, its encoders fitted on the training posts later), when ``train.augment``
            perturbs an input that never reaches a live encoder (``check_augmentation``), or when the embeddings it
            caches could not be written to ``train.cache_dir`` (``check_cache_folder``); before training, when
            ``train.monitor`` is an AUROC the validation split leaves undefined (``check_monitor_defined``); after
            every other check here, before a post is embedded (and before Lightning prints the devices it found),
            when Lightning cannot train with the recipe's ``train.accelerator``, ``devices``, ``strategy`` or
            ``precision`` on this machine.
        FileNotFoundError: With ``resume``, when no run in ``output_dir`` saved a checkpoint; before the model is
            built and any post read, when the file of the training, validation or ``eval.split`` split is not there
            (``check_split``, naming the split and the file), or a dataset's ``root:`` holds no training file: named
            so before a split the folder would give (a test file) is refused as one the data has not.
        ValueError: With ``resume``, when the recipe differs from the run's in anything else; with
            ``eval.crowd_corrections``, before training, when a training post lacks the field it names; before
            anything is written, for a training split without posts or a task's labels (``check_learnable``), a
            validation split without posts or labels (``evaluated_posts``), an ``eval.split`` split none of whose
            posts carries a label (``evaluated_posts``, naming it and ``eval.split``), posts of the training,
            validation or ``eval.split`` split naming a picture the model reads that is not there, or a post of one
            of them whose text or a comment the model reads holds half of a UTF-16 surrogate pair
            (``refuse_unreadable``, a ``PostError`` naming its file, row and field); before the run writes a checkpoint,
            a log or its recipe, when an encoder's preprocessor cannot be pickled and ``train.num_workers`` is above 0
            (``faim.training.loaders.refuse_unpicklable_preprocessors``).
        FileExistsError: Before training, when ``<output_dir>/model`` holds anything but a model.
        SystemExit: With status 143, when the process is sent SIGTERM while it trains (``stop_for_signal``).
        KeyboardInterrupt: On Ctrl-C (SIGINT) while it trains, after which Ctrl-C works as it did before (Lightning
            leaves SIGINT ignored), or while it calibrates the trained model, each saying what resumes the run.
    """
    cfg = recipe.train
    data = recipe.data_section
    output_dir = cfg.run_folder
    check_replaceable(output_dir / RUN_MODEL, MANIFEST)
    check_source_tasks(recipe.source, data, recipe.model["heads"])
    check_shift_with_temperature(recipe.source, recipe.eval)
    check_monitor_mode(recipe.source, cfg, resume)
    resume_from = latest_checkpoint(output_dir, resume_option(resume_hint)) if resume else None
    version = next_version(output_dir)
    checkpoint_dir = resume_from.parent if resume_from else output_dir / "checkpoints" / f"version_{version}"
    max_epochs = cfg.max_epochs
    if resume_from:
        check_resumable(recipe, checkpoint_dir, resume_option(resume_hint))
        max_epochs = epochs_to_train(resume_from, cfg.max_epochs)
    pl.seed_everything(cfg.seed, workers=True, verbose=False)
    source = recipe.data_source()
    splits = source.splits()
    for split in dict.fromkeys(("train", "validation", recipe.eval.split)):
        if split in splits:  # a misspelt file, or a root no split's file is in, is named before a split is missed
            check_split(source, split)
    for key, split in (("data", "train"), ("data", "validation"), ("eval.split", recipe.eval.split)):
        if split not in splits:
            raise RecipeError(
                recipe.source, key, f"the data has no split {split!r}; its splits: {', '.join(splits) or 'none'}"
            )
    detector = Detector.from_recipe(recipe)  # before the data is read: a component refused fails in a second
    check_augmentation(recipe, detector.model)
    check_cache_folder(recipe, detector.model)
    warn_workers_idle(recipe, detector.model)
    kinds, split = sorted(recipe.model["encoders"]), recipe.eval.split
    train_posts, val_posts = source.posts("train"), source.posts("validation")
    eval_posts = val_posts if split == "validation" else source.posts(split)
    read = {"train": train_posts, "validation": val_posts, split: eval_posts}
    warn_source_splits(source, read, kinds)
    warn_shared_ids(source, read)
    fused = recipe_fused_kinds(recipe.model)
    check_learnable(task_specs(recipe.model), train_posts, source.describe("train"), kinds, cfg.max_elements)
    refuse_no_posts(val_posts, source.describe("validation"))
    val_posts = evaluated_posts(recipe, val_posts, source.describe("validation"), remedy=UNLABELLED_VALIDATION)
    warn_uncalibrated(task_specs(recipe.model), val_posts, source.describe("validation"))
    check_monitor_defined(recipe, task_specs(recipe.model), val_posts, source.describe("validation"))
    warn_undefined_auroc(task_specs(recipe.model), val_posts, source.describe("validation"))
    # read before training, so that a post evaluation would stop at stops nothing done
    eval_posts = (
        val_posts if split == "validation" else evaluated_posts(recipe, eval_posts, eval_split_name(source, split))
    )
    warn_overfull_splits({source.describe(name): posts for name, posts in read.items()}, fused, cfg.max_elements)
    if recipe.eval.crowd_corrections:
        check_correction_groups(recipe, train_posts)
    # once the recipe and its data are checked (Lightning prints what devices it found as it is made), before a post
    # is embedded
    logged = not resume_from or trains_more(resume_from, max_epochs)  # a run that trains nothing logs nothing
    trainer, checkpoint, timer = make_trainer(recipe, output_dir, version, checkpoint_dir, max_epochs, logged)
    model, tasks = detector.model, detector.tasks
    model.fit_encoders(train_posts, cfg.max_elements)
    train_loader = recipe_loader(recipe, detector, train_posts, True, "train", augment=True)
    trainer.callbacks.append(TrainerEpochs(train_loader))  # however Lightning wraps its sampler
    val_loader = recipe_loader(recipe, detector, val_posts, False, "validation")
    # once the loaders are made: a run they refuse leaves the output folder as it was; by the first process alone, as
    # Lightning writes the checkpoints beside it: the others of a DDP run start once it has taken its number, and
    # would take the next (Lightning gives them the first's checkpoint folder)
    if not resume_from and trainer.is_global_zero:
        save_run_recipe(recipe, checkpoint_dir)
    with encoding_in_isolation([model]):  # the same random stream and modes whether or not the fusion fits
        model.fit_fusion(train_loader)
    task = PostTask(model, tasks, cfg.lr, cfg.encoder_lr, cfg.weight_decay, cfg.warmup_ratio)
    with warnings.catch_warnings():  # Lightning warns of what this run does on purpose:
        # frozen encoders stay in eval mode (at every fit), and a resumed run saves beside its earlier checkpoints
        warnings.filterwarnings("ignore", message=r"Found \d+ module\(s\) in eval mode")
        warnings.filterwarnings("ignore", message="Checkpoint directory .* is not empty")
        warnings.filterwarnings("ignore", message=SCORES_NOT_SYNCED)  # computed over every process's posts
        interrupt_handler = signal.getsignal(signal.SIGINT)
        try:
            trainer.fit(task, train_loader, val_loader, ckpt_path=resume_from)
        except SystemExit as stop:
            stopped_by = stopping_signal(stop)
            if stopped_by is None:
                raise
            stop_for_signal(stopped_by, checkpoint_dir, resume_hint)
        finally:
            restore_interrupt_handler(interrupt_handler)
    if not trainer.is_global_zero:
        return None
    best = checkpoint.best_model_path or str(checkpoint_dir / "last.ckpt")
    try:  # stopped before the model is saved, as training is: resuming the run fits no more and calibrates anew
        state = torch.load(best, map_location="cpu", weights_only=True)["state_dict"]
        task.load_state_dict(state)
        model.eval()  # trained: returned for inference, as a loaded model is
        weights = crowd_correction_weights(recipe, detector, train_posts) if recipe.eval.crowd_corrections else None
        detector.calibrate(val_loader, recipe.eval, weights)
        warn_temperature_edges(detector.calibration, source.describe("validation"))
    except KeyboardInterrupt:
        stop_for_signal(signal.SIGINT, checkpoint_dir, resume_hint)
    model_dir = detector.save(output_dir / RUN_MODEL)
    (output_dir / RECORD).unlink(missing_ok=True)  # an earlier run's, of the model this run's replaced
    try:  # reading and embedding another split to evaluate on is part of the evaluation
        eval_loader = val_loader if split == "validation" else recipe_loader(recipe, detector, eval_posts, False, split)
    except KeyboardInterrupt:
        say_evaluation_stopped(model_dir, output_dir / "eval", resume_hint)
        raise
    counts = [posts_encoded(loader) for loader in dict.fromkeys([train_loader, val_loader, eval_loader])]
    encoded = None if all(count is None for count in counts) else sum(count or 0 for count in counts)
    return FittedRun(
        detector,
        recipe,
        model_dir,
        best,
        eval_loader,
        source.describe(split),
        post_texts(eval_posts),
        resume_from,
        fit_seconds_before(timer),
        encoded,
    )
