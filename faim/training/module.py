"""The Lightning task: losses over every head, optimiser, and validation metrics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torchmetrics.utilities.distributed import gather_all_tensors

from faim.data.batch import PostBatch
from faim.data.targets import TaskSpec
from faim.model import WholePostModel


def validation_scores(task: TaskSpec, target: np.ndarray, prob: np.ndarray) -> dict[str, float]:
    """AUROC (macro over classes/labels) and macro-F1 at a 0.5 / argmax decision; NaN if undefined. The macro-F1 is
    over every class or label of the task, an F1 with no post of its class and none decided to be counting 0, as
    ``faim.eval.metrics`` counts it: a class the validation split holds no post of is in the mean too."""
    from sklearn.metrics import f1_score, roc_auc_score  # heavy: loaded when first used

    if len(target) == 0:
        return {}
    classes = list(range(len(task.labels)))
    if task.type == "multiclass":
        decision = prob.argmax(-1)
    else:
        decision = (prob >= 0.5).astype(int)
    try:
        if task.type == "multiclass":  # each class against the rest, as faim.eval's macro_auroc (two classes too)
            auroc = np.mean([roc_auc_score(target == c, prob[:, c]) for c in classes])
        else:
            auroc = roc_auc_score(target, prob, average="macro")
    except ValueError:
        auroc = math.nan
    macro_f1 = f1_score(target, decision, labels=classes, average="macro", zero_division=0)
    return {"auroc": float(auroc), "macro_f1": float(macro_f1)}


def across_processes(rows: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Every process's ``rows`` (a tensor of each process's own), in rank order, this process's at its rank, where
    training runs in several processes (DDP: their numbers of rows may differ); ``rows`` itself in one process. The
    rows travel on ``device``, the one the processes communicate from (a GPU's for NCCL), and come back on the CPU."""
    if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        return rows
    return torch.cat(gather_all_tensors(rows.to(device))).cpu()


SCORES_NOT_SYNCED = r"It is recommended to use `self\.log\('val/[^']+/[^']+', \.\.\., sync_dist=True\)`"
"""Lightning's advice, in a multi-process run, to reduce a figure logged once an epoch across the processes, which
``PostTask`` gives for each task's validation scores (``val/TASK/NAME``): every process computes them over the posts
of all, so they are the same in each."""


class PostTask(pl.LightningModule):
    """Trains a ``WholePostModel`` on every task at once (the sum of the heads' losses).

    Args:
        model: The network.
        tasks: One spec per head.
        lr: Learning rate of fusion and heads.
        encoder_lr: Learning rate of unfrozen encoder parameters (``None``: ``lr``).
        weight_decay: AdamW weight decay.
        warmup_ratio: Fraction of training steps with linear warm-up before linear decay.
    """

    def __init__(
        self,
        model: WholePostModel,
        tasks: list[TaskSpec],
        lr: float = 1e-3,
        encoder_lr: float | None = None,
        weight_decay: float = 0.01,
        warmup_ratio: float = 0.0,
    ) -> None:
        super().__init__()
        self.model = model
        self.tasks = tasks
        self.lr = lr
        self.encoder_lr = encoder_lr if encoder_lr is not None else lr
        self.weight_decay = weight_decay
        self.warmup_ratio = warmup_ratio
        self._outputs: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {}

    def losses(self, batch: PostBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        logits = self.model(batch)
        per_task = {t.name: self.model.heads[t.name].loss(logits[t.name], batch.targets[t.name]) for t in self.tasks}
        return torch.stack(list(per_task.values())).sum(), logits

    def training_step(self, batch: PostBatch, batch_idx: int) -> torch.Tensor:
        loss, _ = self.losses(batch)
        self.log("train/loss_step", loss, prog_bar=True, batch_size=batch.size)  # this process's batch, unreduced
        # the figure a train.monitor of train/loss reads: over the epoch's posts of every process (reduced across them
        # once, as the epoch ends), not its last batch's
        self.log("train/loss", loss, batch_size=batch.size, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def on_validation_epoch_start(self) -> None:
        self._outputs = {t.name: [] for t in self.tasks}

    def validation_step(self, batch: PostBatch, batch_idx: int) -> None:
        loss, logits = self.losses(batch)
        self.log("val/loss", loss, prog_bar=True, batch_size=batch.size, sync_dist=True)
        for task in self.tasks:
            target = batch.targets[task.name]
            keep = task.labelled(target)
            prob = self.model.heads[task.name].probabilities(logits[task.name].float())
            self._outputs[task.name].append((target[keep].cpu(), prob[keep].cpu()))

    def on_validation_epoch_end(self) -> None:
        """Log each task's validation scores over the validation posts of every process, as they are in each (the
        loss, a figure of each process's own posts, is averaged across them): AUROC is not a mean of the processes'
        own. (Lightning's distributed sampler repeats up to one post fewer than the processes, to give
        each as many, and the scores count those twice.)"""
        for task in self.tasks:
            parts = self._outputs.get(task.name) or []
            if not parts:
                continue
            target = across_processes(torch.cat([p[0] for p in parts]), self.device).numpy()
            prob = across_processes(torch.cat([p[1] for p in parts]), self.device).numpy()
            for name, value in validation_scores(task, target, prob).items():
                # the same figure in every process already: not reduced across them again (``SCORES_NOT_SYNCED``)
                self.log(f"val/{task.name}/{name}", value, prog_bar=name == "auroc")

    def configure_optimizers(self) -> Any:
        encoder_params = [p for p in self.model.encoders.parameters() if p.requires_grad]
        encoder_ids = {id(p) for p in encoder_params}
        other = [p for p in self.model.parameters() if p.requires_grad and id(p) not in encoder_ids]
        groups = [{"params": other, "lr": self.lr}]
        if encoder_params:
            groups.append({"params": encoder_params, "lr": self.encoder_lr})
        optimizer = torch.optim.AdamW(groups, weight_decay=self.weight_decay)
        total = max(1, int(self.trainer.estimated_stepping_batches))
        warmup = int(total * self.warmup_ratio)

        def schedule(step: int) -> float:
            if warmup and step < warmup:
                return (step + 1) / warmup
            return max(0.0, (total - step) / max(1, total - warmup)) if self.warmup_ratio else 1.0

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
