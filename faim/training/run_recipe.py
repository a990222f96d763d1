"""The recipe each run trains with, saved beside its checkpoints, so that ``--resume`` continues a run only with
the recipe it trained with. A checkpoint restores the weights, the optimizer and learning-rate schedule, the
early-stopping state and the epoch; a recipe changed in anything else would be ignored without a word (learning
rates, patience), fail on the weights (the model) or quietly go on with other data."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import torch

from faim.folders import RUN_RECIPE
from faim.notices import warn
from faim.recipe import Recipe
from faim.recipe.compare import changed_fields, describe_changes, plain
from faim.wording import plural

# What a resumed run may change: how long it goes on, where and how fast it runs, and what happens after training;
# its output_dir as written (runs/x, ./runs/x) is the folder its checkpoints were found in, wherever it was moved
RESUMABLE_FIELDS = (
    "train.max_epochs",
    "train.accelerator",
    "train.strategy",
    "train.devices",
    "train.num_workers",
    "train.precision",
    "train.log_every_n_steps",
    "train.cache_dir",
    "train.output_dir",
)
RESUMABLE_SECTIONS = ("eval",)


def save_run_recipe(recipe: Recipe, checkpoint_dir: Path) -> None:
    """Write the resolved recipe to ``checkpoint_dir/recipe.yaml``."""
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    (checkpoint_dir / RUN_RECIPE).write_text(recipe.to_yaml(), encoding="utf-8")


def check_resumable(recipe: Recipe, checkpoint_dir: Path, resumed_by: str) -> None:
    """Check that ``recipe`` may continue the run whose checkpoints are in ``checkpoint_dir``: it may differ from the
    run's saved recipe only in ``RESUMABLE_FIELDS`` and ``RESUMABLE_SECTIONS``. A run saved without its recipe (by an
    earlier faim) cannot be checked, and a warning says so. The error and the warning begin with ``resumed_by``, what
    asked to resume (``resume=True`` of ``faim.train``, ``faim train``'s ``--resume``).

    Raises:
        ValueError: Naming the fields that changed, when another one did.
    """
    path = checkpoint_dir / RUN_RECIPE
    if not path.is_file():
        warn(f"{resumed_by}: {path} is missing, so the recipe cannot be checked against the run")
        return
    changed = {
        field: values
        for field, values in changed_fields(plain(Recipe.load(path)), plain(recipe)).items()
        if field not in RESUMABLE_FIELDS and field.split(".")[0] not in RESUMABLE_SECTIONS
    }
    if changed:
        raise ValueError(
            f"{resumed_by}: the recipe differs from the one the run in {checkpoint_dir} trained with "
            f"({describe_changes(changed)}; see {path}). A resumed run may change only "
            f"{', '.join(RESUMABLE_FIELDS + RESUMABLE_SECTIONS)}; train without {resumed_by} to start a new run"
        )


def early_stop(state: dict[str, Any]) -> str | None:
    """Why early stopping ended the fit whose checkpoint holds ``state`` (its contents as read), as Lightning says it;
    ``None`` where it did not. Lightning before 2.5 records only the epoch it stopped at, 0 also where it did not
    stop, so there a fit stopped after its first epoch is not told."""
    for key, callback in state.get("callbacks", {}).items():
        if key.startswith("EarlyStopping") and (callback.get("stopping_reason") or callback.get("stopped_epoch")):
            return callback.get("stopping_reason_message") or f"stopped at epoch {callback['stopped_epoch']}"
    return None


def checkpoint_state(checkpoint: Path) -> dict[str, Any] | None:
    """``checkpoint`` read as plain tensors and numbers (``weights_only``), mapped; ``None`` where it cannot be read
    so, or records no epoch (Lightning reads such a one whole)."""
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=True)
        int(state["epoch"])
    except (pickle.UnpicklingError, RuntimeError, KeyError, TypeError, ValueError):
        return None
    return state


def trains_more(checkpoint: Path, max_epochs: int) -> bool:
    """Whether a run resumed from ``checkpoint`` up to ``max_epochs`` (``epochs_to_train``'s) trains an epoch: not
    where the checkpoint has trained them all (one ``checkpoint_state`` cannot read is left to Lightning)."""
    state = checkpoint_state(checkpoint)
    return state is None or int(state["epoch"]) + 1 < max_epochs


def epochs_to_train(checkpoint: Path, max_epochs: int) -> int:
    """The epochs a run resumed from ``checkpoint`` (a ``last.ckpt``) trains up to: ``max_epochs``
    (``train.max_epochs``), or, where early stopping ended the run, the epochs it trained, so that it trains nothing
    more and writes its model, as a run that trained ``max_epochs`` does (printing that early stopping ended it).
    The checkpoint is read as plain tensors and numbers (``weights_only``), mapped; one that cannot be read so, or
    records no epoch, is left to Lightning, which reads it whole.

    Raises:
        ValueError: For ``max_epochs`` below the epochs the checkpoint trained, which Lightning would refuse with an
            error naming its own Trainer: naming the checkpoint, the epochs and the setting to raise.
    """
    state = checkpoint_state(checkpoint)
    if state is None:
        return max_epochs
    trained = int(state["epoch"]) + 1
    if max_epochs < trained:
        raise ValueError(
            f"resuming: {checkpoint} has trained {trained} epochs, more than train.max_epochs {max_epochs}; set "
            f"train.max_epochs to {trained} or more to go on"
        )
    why = early_stop(state)
    if why is None:
        return max_epochs
    print(
        f"resuming: early stopping ended the run of {checkpoint} after {plural(trained, 'epoch')} ({why}); it trains "
        "no more and its model is written (train anew, without resuming, to train with another train.patience)"
    )
    return trained
