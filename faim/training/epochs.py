"""``TrainerEpochs``, the callback that has a training loader draw the epoch its trainer is at. Apart from the loaders
(``faim.training.loaders``), which evaluation reads posts through too, as it imports Lightning, and with it
torchmetrics, transformers and matplotlib, which evaluating does not load until it draws."""

from __future__ import annotations

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from faim.training.loaders import EpochDraws


class TrainerEpochs(pl.Callback):
    """Has the ``EpochDraws`` of ``loader`` (where it has one) draw, as the trainer fitting on it reads it, the epoch
    that trainer is at, the one Lightning tells it by ``set_epoch`` as the epoch starts. Lightning tells it nothing
    where it wraps the sampler for several processes (DDP) before its release 2.6.1, and with workers (which draw as
    the loader is readied) the first epoch a run trains, a resumed run's, is drawn before it is told."""

    def __init__(self, loader: DataLoader) -> None:
        self.draws = loader.sampler if isinstance(loader.sampler, EpochDraws) else None

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.draws is not None:
            self.draws.epochs = lambda: trainer.fit_loop.epoch_progress.current.processed
