"""The callback that has a training loader draw the epoch its trainer is at (``faim.training.epochs``), however
Lightning wraps its sampler and wherever a run resumes."""

from __future__ import annotations

from pathlib import Path

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, RandomSampler, Sampler

from faim.training.epochs import TrainerEpochs
from faim.training.loaders import EpochDraws


class Wrapped(Sampler):
    """``sampler`` wrapped, telling it no epoch, as Lightning's wrapper for several processes did before 2.6.1."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def __iter__(self):  # noqa: ANN204
        return iter(list(self.sampler))

    def __len__(self) -> int:
        return len(self.sampler)


class Orders(pl.LightningModule):
    """A module noting the order of the posts of each epoch it trains on."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.orders: list[list[int]] = []

    def on_train_epoch_start(self) -> None:
        self.orders.append([])

    def training_step(self, batch: torch.Tensor, index: int) -> torch.Tensor:
        self.orders[-1] += batch.tolist()
        return (self.weight * batch).sum()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.0)


def test_a_loader_drawn_in_a_wrapped_sampler_draws_the_epoch_its_trainer_is_at_when_resumed_too(tmp_path: Path) -> None:
    draws = EpochDraws(RandomSampler(range(8), generator=torch.Generator()), seed=3)
    orders = []
    for epoch in range(3):
        draws.set_epoch(epoch)
        orders.append(list(draws))
    draws.set_epoch(0)
    loader = DataLoader(range(8), batch_size=4, sampler=draws)
    list(loader)  # read before training, as a fusion fitted on it reads it
    wrapped = DataLoader(range(8), batch_size=4, sampler=Wrapped(draws))
    options = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    first, resumed = Orders(), Orders()
    trainer = pl.Trainer(max_epochs=2, callbacks=[TrainerEpochs(loader)], **options)
    trainer.fit(first, wrapped)
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    pl.Trainer(max_epochs=3, callbacks=[TrainerEpochs(loader)], **options).fit(
        resumed, wrapped, ckpt_path=tmp_path / "last.ckpt"
    )
    assert first.orders + resumed.orders == orders  # each epoch's, where it drew its first (1, 2) and then 3
