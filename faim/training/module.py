"""The Lightning task: losses over every head, optimiser, and validation metrics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torchmetrics.utilities.distributed import gather_all_tensors

from faim.calibration.fit import Calibration
from faim.data.batch import PostBatch
from faim.data.targets import TaskSpec
from faim.model import WholePostModel
from faim.wording import plural


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
    if task.type == "multiclass":  # each class against the rest, as faim.eval's macro_auroc (two classes too)
        columns = [(target == c, prob[:, c]) for c in classes]
    elif task.type == "multilabel":  # each label apart, the macro mean
        columns = [(target[:, c], prob[:, c]) for c in classes]
    else:
        columns = [(target, prob)]
    auroc = math.nan  # undefined where a column's posts are all of one class (warned of before training)
    if all(len(np.unique(truth)) == 2 for truth, _ in columns):
        try:
            auroc = np.mean([roc_auc_score(truth, score) for truth, score in columns])
        except ValueError:  # probabilities that are not numbers
            pass
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


def refuse_head_loss(
    task: TaskSpec, head: torch.nn.Module, loss: torch.Tensor, logits: torch.Tensor, batch: PostBatch
) -> None:
    """Refuse the ``loss`` ``head`` (``task``'s) gave on ``batch`` where it is not finite though its ``logits`` are: a
    loss reading the targets of unlabelled posts (NaN, -100), or, where every post is labelled, one computed so that
    it overflows, which training would carry into every weight.

    Raises:
        ValueError: Naming the task, the head's class, the loss, and how many of the batch's posts are unlabelled
            (what to do where none is).
    """
    if torch.isfinite(loss) or not torch.isfinite(logits).all():
        return
    target = batch.targets[task.name]
    missing = target == -100 if task.type == "multiclass" else torch.isnan(target)
    unlabelled = int(missing.reshape(len(target), -1).any(1).sum())
    given = f"head {task.name!r} ({type(head).__name__}) gave a loss of {loss.item()} on finite logits for a batch of "
    if not unlabelled:
        raise ValueError(
            f"{given}{plural(batch.size, 'post')}, every one labelled for it: a loss computed from probabilities "
            "overflows on large logits (log(sigmoid(-200)) is -inf in float32); compute it from the logits "
            "(torch.nn.functional.binary_cross_entropy_with_logits, cross_entropy)"
        )
    raise ValueError(
        f"{given}{plural(batch.size, 'post')}, {unlabelled} of them unlabelled for it; a head's loss skips unlabelled "
        "targets (NaN for a binary or multilabel task, -100 for a multiclass one), as faim.tasks.base.labelled_mean "
        "does"
    )


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
        self._outputs: dict[str, list[tuple[torch.Tensor, torch.Tensor]]] = {}  # task → (targets, logits) per batch
        self.uncalibrated = Calibration.identity(tasks)

    def losses(self, batch: PostBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The sum of the heads' losses over ``batch``, and each task's logits.

        Raises:
            ValueError: Naming a head whose loss is not finite where its logits are (``refuse_head_loss``).
        """
        logits = self.model(batch)
        per_task = {t.name: self.model.heads[t.name].loss(logits[t.name], batch.targets[t.name]) for t in self.tasks}
        loss = torch.stack(list(per_task.values())).sum()
        if not torch.isfinite(loss):  # one check of the sum; the heads are looked into only when it fails
            for task in self.tasks:
                refuse_head_loss(task, self.model.heads[task.name], per_task[task.name], logits[task.name], batch)
        return loss, logits

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
            self._outputs[task.name].append((target[keep].cpu(), logits[task.name][keep].float().cpu()))

    def on_validation_epoch_end(self) -> None:
        """Log each task's validation scores, of the probabilities its logits give by the task's type (a binary task's
        sigmoid, as scoring gives them before calibration: ``Calibration.identity``, whatever link function a head
        has), over the validation posts of every process, as they are in each (the
        loss, a figure of each process's own posts, is averaged across them): AUROC is not a mean of the processes'
        own. (Lightning's distributed sampler repeats up to one post fewer than the processes, to give
        each as many, and the scores count those twice.)"""
        for task in self.tasks:
            parts = self._outputs.get(task.name) or []
            if not parts:
                continue
            target = across_processes(torch.cat([p[0] for p in parts]), self.device).numpy()
            logits = across_processes(torch.cat([p[1] for p in parts]), self.device).numpy()
            self.refuse_diverged(task, logits)
            prob = self.uncalibrated.probabilities(task, logits)
            for name, value in validation_scores(task, target, prob).items():
                # the same figure in every process already: not reduced across them again (``SCORES_NOT_SYNCED``)
                self.log(f"val/{task.name}/{name}", value, prog_bar=name == "auroc")

    def refuse_diverged(self, task: TaskSpec, logits: np.ndarray) -> None:
        """Refuse ``task``'s validation ``logits`` (one row a post) where any is not finite: training diverged (a
        learning rate too high carries NaN into every weight), and calibration could not read them.

        Raises:
            ValueError: Naming the epoch, the task, how many posts, and the learning rates to lower.
        """
        bad = int((~np.isfinite(logits.reshape(len(logits), -1))).any(1).sum())
        if not bad:
            return
        rates = f"train.lr (now {self.lr})"
        if self.encoder_lr != self.lr:
            rates += f" or train.encoder_lr (now {self.encoder_lr})"
        raise ValueError(
            f"epoch {self.current_epoch}: the model's scores for task {task.name!r} are not finite (nan or inf) on "
            f"{bad} of the {len(logits)} validation posts: training diverged; train anew with a lower {rates}"
        )

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
