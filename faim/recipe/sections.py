"""A recipe's sections, and its ``train:`` and ``eval:`` sections as dataclasses whose fields are the valid keys."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from faim.data.post import LANGUAGE
from faim.training.cache_entries import DEFAULT_CACHE_DIR

SECTIONS = ("data", "model", "train", "eval")
"""The keys of a recipe mapping."""

MODEL_KEYS = ("encoders", "fusion", "heads")
"""The keys of a recipe's ``model:`` section."""


def best_mode(monitor: str) -> str:
    """The ``train.mode`` that keeps the epoch where ``monitor`` is best: ``"min"`` for a loss (``val/loss``),
    ``"max"`` for a score (``val/TASK/auroc``, ``val/TASK/macro_f1``)."""
    return "min" if monitor.endswith("/loss") else "max"


@dataclass
class TrainConfig:
    """How to train.

    Attributes:
        max_epochs: Upper bound on epochs (early stopping usually ends sooner).
        batch_size: Posts per batch per device.
        lr: Learning rate of fusion and heads (and of encoders unless ``encoder_lr`` is set).
        encoder_lr: Learning rate of unfrozen encoders (fine-tuning); ``None`` uses ``lr``.
        weight_decay: AdamW weight decay.
        warmup_ratio: Fraction of steps with linear warm-up, then linear decay to zero.
        seed: Seeds Python, NumPy and torch (and the data order).
        precision: Lightning precision: ``"32-true"``, ``"bf16-mixed"`` (bf16 autocast), ``"16-mixed"`` (fp16
            autocast on GPUs), or any other Lightning takes, its short forms too (``16``, ``32``, ``64`` written as
            numbers or strings, ``"bf16"``), but ``"bf16-true"`` and ``"16-true"``, which put the weights in half
            precision (``faim.recipe.validate.check_weights_precision``).
        accelerator: ``"cpu"``, ``"gpu"`` or ``"auto"``.
        strategy: ``"auto"``, ``"ddp"`` (multi-process data-parallel, CPU or GPU), ``"fsdp"`` (GPUs).
        devices: Processes/devices to train on.
        num_workers: DataLoader worker processes (decode and tokenise off the main process); with
            ``cache_embeddings``, they embed the posts not cached yet, and the kinds whose encoders train beside
            frozen ones are read in the main process (``faim.training.run.warn_workers_idle``), metadata at no cost.
        monitor: Validation metric for early stopping and the best checkpoint (e.g. ``"val/loss"``,
            ``"val/hate/auroc"``).
        mode: ``"min"`` or ``"max"``, for ``monitor``; ``None`` (not given): the one keeping its best epoch
            (``best_mode``).
        patience: Epochs without improvement before stopping.
        cache_embeddings: Compute the element embeddings of each frozen encoder once and cache them; the kinds
            whose encoders train are read anew every epoch.
        cache_dir: Where cached embeddings live.
        output_dir: Run directory: each run's checkpoints and logs under ``version_N`` folders (see
            ``faim.training.versions``), the latest run's exported model under ``model/``.
        max_elements: Images and comments taken per post.
        log_every_n_steps: Logging interval.
        augment: Perturbation name (``faim.perturb.PERTURBATIONS``, e.g. ``text.char_swap``) to the
            probability that a training post gets it, drawn afresh for every post in every epoch, at the
            perturbation's default strength. Validation and evaluation posts are never augmented. Each perturbed
            input must reach an encoder of the model that reads it live: one that trains, or any with
            ``cache_embeddings`` off.
        balance: ``None``: every training post is drawn once an epoch, in a shuffled order. ``"sources"``: with a
            ``concat`` data section, each member's training posts are drawn equally often in all (with
            replacement, as many draws an epoch as there are posts), so the largest dataset does not decide what
            the model learns.
    """

    max_epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-3
    encoder_lr: float | None = None
    weight_decay: float = 0.01
    warmup_ratio: float = 0.0
    seed: int = 0
    precision: int | str = "32-true"
    accelerator: str = "cpu"
    strategy: str = "auto"
    devices: int = 1
    num_workers: int = 0
    monitor: str = "val/loss"
    mode: str | None = None
    patience: int = 3
    cache_embeddings: bool = True
    cache_dir: str = DEFAULT_CACHE_DIR
    output_dir: str = "runs/faim"
    max_elements: int = 8
    log_every_n_steps: int = 10
    augment: dict[str, float] = field(default_factory=dict)
    balance: str | None = None

    def __post_init__(self) -> None:
        if self.mode is None:
            self.mode = best_mode(self.monitor)

    @property
    def run_folder(self) -> Path:
        """``output_dir`` as a path, a leading ``~`` expanded to the home folder (as Lightning expands it where it
        writes checkpoints and logs, so that faim's files and Lightning's land in one folder)."""
        return Path(self.output_dir).expanduser()


@dataclass
class EvalConfig:
    """How to evaluate.

    Attributes:
        split: Data split evaluated after training.
        threshold_objective: How the decision threshold is chosen on validation data: ``"f1"``,
            ``"macro_f1"``, ``"precision@recall"`` or ``"recall@precision"``.
        threshold_target: The recall or precision target of the last two objectives.
        threshold_balance: ``None``: every validation post counts one in the threshold's objective. ``"sources"``:
            where the validation posts come from several sources (a ``concat`` with ``evaluate_on: all``), each
            source's posts of each class count as much in all, so the threshold does not follow the largest
            source's share of positives but holds for a new one whose share is not known.
        fixed_recall: Recalls at which precision is reported.
        fixed_precision: Precisions at which recall is reported.
        calibration_bins: Bins of the expected calibration error and reliability plot.
        temperature: Fit a temperature on validation data so probabilities are calibrated.
        logit_shift: With ``temperature``, binary tasks also fit a shift of the logit (Platt scaling). A
            temperature cannot correct probabilities when the share of positives differs between the training
            and validation data; a shift can. It adds one more parameter fitted on validation data.
        logit_shift_level: With ``logit_shift``, keep the shift only where a likelihood-ratio test on the labelled
            posts finds one at this significance level, else fit the temperature alone (``None``: always keep it).
            On a few hundred labels a shift that is not there adds noise; ``faim calibrate`` refits with 0.05.
        pool_by_image: Pool evidence across posts that share a picture: posts whose first images' embeddings (from
            the model's image encoder) have at least this cosine are linked, and every post takes the mean logits of
            its linked group before calibration. Evaluation then depends on which posts are evaluated together
            (transductive), and the per-post figures are reported as the ``without_pooling`` ablation with a
            calibration of their own. ``faim score`` scores posts one by one with that per-post calibration;
            ``faim score --pool-by-image`` scores a dump pooled, ``Detector.score(posts, pool_by_image=True)`` a
            list of posts. ``None``: no pooling.
        crowd_corrections: With ``pool_by_image``, a ``Post.meta`` field (such as ``event``) grouping the training
            posts: the share of a picture's posts that question or correct it (``faim.preprocess.corrections``)
            then adds to each binary task's pooled logit, with a weight fitted by cross-validation over those
            groups (``faim.calibration.crowd``), kept only where a test at the 5 % level finds that it
            carries over to groups not fitted on. ``None``: the crowd's corrections are not read.
        slice: ``Post.meta`` field whose values define per-slice metrics (``None``: no slices); ``lang`` slices by
            the language each post is written in where it gives none, as ``languages`` reads it.
        languages: Give each evaluated post without ``meta.lang`` the language it is written in
            (``faim.data.language``) and, when more than one language appears, report every task's metrics per
            language too (``languages`` in its results).
        ablations: Also report metrics with each element kind masked out (multimodal models).
        batch_size: Posts per scoring batch.
    """

    split: str = "validation"
    threshold_objective: str = "f1"
    threshold_balance: str | None = None
    threshold_target: float = 0.9
    fixed_recall: list[float] = field(default_factory=lambda: [0.9])
    fixed_precision: list[float] = field(default_factory=lambda: [0.9])
    calibration_bins: int = 15
    temperature: bool = True
    logit_shift: bool = False
    logit_shift_level: float | None = None
    pool_by_image: float | None = None
    crowd_corrections: str | None = None
    slice: str | None = None
    languages: bool = True
    ablations: bool = True
    batch_size: int = 64

    @property
    def detects_languages(self) -> bool:
        """Whether each evaluated post without ``meta.lang`` is given the language it is written in: for the metrics
        per language (``languages``) or for slices by language (``slice: lang``)."""
        return self.languages or self.slice == LANGUAGE


DEFAULTED_KEYS = {"train": {f.name for f in fields(TrainConfig)}, "eval": {f.name for f in fields(EvalConfig)}}
"""The sections that take their defaults where a recipe leaves them out or null (``eval:`` with nothing under it),
each with its keys, a null at which takes its default too, in a recipe with a base or without and by ``--set`` alike
(every one whose value may be null has null as its default); ``data:`` and ``model:`` have none, so a null one is
refused as what it should be."""
