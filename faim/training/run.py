"""``train(recipe)``: data → model → Lightning fit → calibration → saved artifact → evaluation report."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from pytorch_lightning.loggers import CSVLogger, TensorBoardLogger

from faim.build import build_model, build_source, task_specs
from faim.detector import Detector
from faim.evaluate import calibrate, evaluate_loader
from faim.recipe import Recipe, as_recipe
from faim.training.loaders import make_loader
from faim.training.module import PostTask


@dataclass
class TrainResult:
    """What a training run produced."""

    detector: Detector
    model_dir: Path
    report: dict[str, Any]
    best_checkpoint: str


# Absent-element vectors and per-kind layers get no gradient in batches where every post has (or
# lacks) that kind, so DDP must look for unused parameters.
STRATEGY_ALIASES = {"ddp": "ddp_find_unused_parameters_true"}


def make_trainer(recipe: Recipe, output_dir: Path) -> tuple[pl.Trainer, ModelCheckpoint]:
    cfg = recipe.train
    checkpoint = ModelCheckpoint(
        dirpath=output_dir / "checkpoints", monitor=cfg.monitor, mode=cfg.mode, save_last=True, save_top_k=1
    )
    trainer = pl.Trainer(
        max_epochs=cfg.max_epochs,
        accelerator=cfg.accelerator,
        devices=cfg.devices,
        strategy=STRATEGY_ALIASES.get(cfg.strategy, cfg.strategy),
        precision=cfg.precision,
        callbacks=[checkpoint, EarlyStopping(monitor=cfg.monitor, mode=cfg.mode, patience=cfg.patience)],
        logger=[CSVLogger(output_dir, name="logs"), TensorBoardLogger(output_dir, name="tensorboard")],
        log_every_n_steps=cfg.log_every_n_steps,
        default_root_dir=output_dir,
        deterministic=True,
        enable_model_summary=False,
    )
    return trainer, checkpoint


def train(
    recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None, resume: bool = False
) -> TrainResult | None:
    """Train, calibrate, save and evaluate the model a recipe describes.

    Returns ``None`` in the non-zero ranks of a multi-process (DDP) run; rank 0 returns the result.
    With ``resume``, training continues from ``<output_dir>/checkpoints/last.ckpt``.
    """
    recipe = as_recipe(recipe, overrides)
    cfg = recipe.train
    output_dir = Path(cfg.output_dir)
    last = output_dir / "checkpoints" / "last.ckpt"
    if resume and not last.exists():
        raise FileNotFoundError(f"--resume: no checkpoint to resume from at {last}")
    pl.seed_everything(cfg.seed, workers=True, verbose=False)
    source = build_source(recipe.data)
    train_posts, val_posts = source.posts("train"), source.posts("validation")
    model = build_model(recipe.model)
    tasks = task_specs(recipe.model)
    detector = Detector(model, tasks, recipe)
    collator = detector.collator(with_targets=True)
    cache_dir = cfg.cache_dir if cfg.cache_embeddings else None

    def loader(posts: list, shuffle: bool, label: str) -> Any:
        return make_loader(model, collator, posts, cfg.batch_size, shuffle, cfg.num_workers, cache_dir, label)

    train_loader, val_loader = loader(train_posts, True, "train"), loader(val_posts, False, "validation")
    task = PostTask(model, tasks, cfg.lr, cfg.encoder_lr, cfg.weight_decay, cfg.warmup_ratio)
    trainer, checkpoint = make_trainer(recipe, output_dir)
    with warnings.catch_warnings():  # frozen encoders stay in eval mode on purpose; Lightning warns at every fit
        warnings.filterwarnings("ignore", message=r"Found \d+ module\(s\) in eval mode")
        trainer.fit(task, train_loader, val_loader, ckpt_path=str(last) if resume else None)
    if not trainer.is_global_zero:
        return None
    best = checkpoint.best_model_path or str(last)
    state = torch.load(best, map_location="cpu", weights_only=True)["state_dict"]
    task.load_state_dict(state)
    calibrate(detector, val_loader)
    model_dir = output_dir / "model"
    detector.save(str(model_dir))
    split = recipe.eval.split
    eval_loader = val_loader if split == "validation" else loader(source.posts(split), False, split)
    report = evaluate_loader(detector, eval_loader, output_dir / "eval", source.describe(recipe.eval.split))
    return TrainResult(detector, model_dir, report, best)
