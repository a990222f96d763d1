"""The modules written as graphs, and writing them through torch.onnx's dynamo exporter (torch.export).

A model is exported as one graph per encoder part plus one for fusion and heads, because the shapes demand it
there: an encoder embeds a flat batch of elements (``[N, ...]``: every text, picture or comment of the posts,
however many each post has), and the fusion reads them laid out per post (``[B, n, d]`` and a mask), which is
a scatter by data-dependent indices that the runtime does in numpy between the two. The split also keeps an
encoder that embeds several kinds (comments with the text encoder) one graph.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

from faim.calibration.fit import Calibration
from faim.data.targets import TaskSpec
from faim.export.fusions import write_fused
from faim.model import WholePostModel
from faim.runtime.bundle import elements_names, fusion_outputs


class TextGraph(nn.Module):
    """A text encoder taking ``input_ids`` and ``attention_mask`` (``[N, T]`` int64) as two inputs."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder({"input_ids": input_ids, "attention_mask": attention_mask}).float()


class BagGraph(nn.Module):
    """An encoder of bags (``ngram_text``): ``indices`` and ``weights`` ``[M]`` of every text's n-grams one after
    another, ``offsets`` ``[N]`` where each text's start."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return self.encoder({"indices": indices, "offsets": offsets, "weights": weights}).float()


class TensorGraph(nn.Module):
    """An encoder taking one tensor (pixels ``[N, 3, H, W]`` or metadata features ``[N, F]``)."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.encoder(inputs).float()


class FusionGraph(nn.Module):
    """Fusion and heads: for each fused kind, in order, ``embeddings [B, n, d]`` and ``mask [B, n]`` in; the
    whole-post embedding, then each task's raw logits and calibrated probabilities out.

    Calibration is part of the graph: ``sigmoid(z / T + s)`` for a binary task, ``softmax(z / T)`` for a
    multiclass one, each label's ``sigmoid(z)`` for a multilabel one (as ``Calibration.probabilities``). It holds the
    model's fusion and heads only: a pt2 program keeps every weight of the module it was exported from, the
    encoders' too, which its own graphs hold already.
    """

    def __init__(self, model: WholePostModel, tasks: list[TaskSpec], calibration: Calibration) -> None:
        super().__init__()
        self.fusion, self.heads = model.fusion, model.heads
        self.kinds = list(model.fused_kinds)
        self.tasks = tasks
        self.temperatures = {task.name: float(calibration.temperatures[task.name]) for task in tasks}
        self.shifts = {task.name: float(calibration.logit_shifts[task.name]) for task in tasks}

    def forward(self, *elements: torch.Tensor) -> tuple[torch.Tensor, ...]:
        pairs = {kind: (elements[2 * i], elements[2 * i + 1]) for i, kind in enumerate(self.kinds)}
        embedding = self.fusion(pairs).float()
        outputs = [embedding]
        for task in self.tasks:
            logits = self.heads[task.name](embedding).float()
            outputs += [logits, self.calibrated(task, logits)]
        return tuple(outputs)

    def calibrated(self, task: TaskSpec, logits: torch.Tensor) -> torch.Tensor:
        if task.type == "multilabel":
            return torch.sigmoid(logits)
        scaled = logits / self.temperatures[task.name]
        if task.type == "binary":
            return torch.sigmoid(scaled + self.shifts[task.name])
        return torch.softmax(scaled, dim=-1)

    def input_names(self) -> list[str]:
        return [name for kind in self.kinds for name in elements_names(kind)]

    def output_names(self) -> list[str]:
        return fusion_outputs([task.name for task in self.tasks])


def dynamic_shapes(module: nn.Module, dynamic_axes: list[dict[int, str]], bounded: bool = False) -> tuple[Any, ...]:
    """torch.export's ``dynamic_shapes`` for ``module``'s inputs: one ``torch.export.Dim`` per axis name (axes sharing a
    name share a size), or with ``bounded`` ``Dim.DYNAMIC`` on each, which lets tracing set the axis's range."""
    dims: dict[str, Any] = {}

    def dim(name: str) -> Any:
        return torch.export.Dim.DYNAMIC if bounded else dims.setdefault(name, torch.export.Dim(name))

    shapes = tuple({axis: dim(name) for axis, name in axes.items()} for axes in dynamic_axes)
    if any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(module.forward).parameters.values()):
        shapes = (shapes,)  # torch.export reads ``*args`` as one argument
    return shapes


EXPORTER_LOGGERS = ("onnxscript", "onnx_ir")
"""Loggers of the ONNX exporter's passes (optimizer, initializer deduplication)."""


@contextmanager
def exporter_notes_silenced() -> Iterator[None]:
    """Silence, while a graph is written, the exporters' warnings and their passes' logged ones (``EXPORTER_LOGGERS``
    below ``ERROR``): notes on their own internals (a constant the optimizer leaves unfolded in the n-gram graph's
    loop, an initializer left undeduplicated), not on the model. What an export gets wrong shows in its outputs,
    which ``faim.export.model.traced`` checks against the model's; the loggers' levels are restored after."""
    loggers = [logging.getLogger(name) for name in EXPORTER_LOGGERS]
    levels = [logger.level for logger in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for logger, level in zip(loggers, levels):
                logger.setLevel(level)


def write_onnx(
    module: nn.Module,
    inputs: tuple[torch.Tensor, ...],
    input_names: list[str],
    output_names: list[str],
    dynamic_axes: list[dict[int, str]],
    path: Path,
    fuse: bool = False,
    attention_reads_mask: bool = True,
) -> None:
    """Export ``module`` on example ``inputs`` to ``path`` with torch.onnx's dynamo exporter, dynamic along
    ``dynamic_axes`` (see ``dynamic_shapes``), weights inside the file; with ``fuse``, rewritten into
    onnxruntime's fused operators first (``faim.export.fusions``: for a transformer reading token ids), each
    attention reading the padding mask itself unless ``attention_reads_mask`` is false.

    Raises:
        torch.export and ONNX errors as they come; the caller names the module.
    """
    module.eval()
    with exporter_notes_silenced(), torch.no_grad():
        program = torch.onnx.export(
            module,
            inputs,
            input_names=input_names,
            output_names=output_names,
            dynamic_shapes=dynamic_shapes(module, dynamic_axes),
            dynamo=True,
            verbose=False,
        )
        if fuse:
            write_fused(program.model, path, attention_reads_mask)
        else:
            program.save(str(path), external_data=False)
