"""int8 exports: the weights of every encoder graph's matrix products quantized to int8, one scale per output channel,
by onnxruntime's dynamic quantization (activations are quantized per batch as the graph runs), a transformer's
fused ``Attention`` included (``QAttention``: its query, key and value products in int8, the attention itself in
fp32), the fusion-and-heads graph kept in fp32 (small, and it holds the calibration). Given sample posts, each graph
is smoothed first (``faim.export.smoothing``) at the strength that keeps its int8 outputs closest to fp32 on them.
Whether the quantized model is good enough is measured on labelled posts by the caller (``faim.eval.quantization``).

The figures that chose these settings (``python -m faim.eval.bench_quantization``, validation posts, two cores): with
AVX-512 VNNI, plain int8 held ``hate_text_frozen``, ``hate_text_frozen_davidson``, ``hate_text_general`` (e5),
``hate_text_stacked``, ``hate_text_multilingual`` and ``misinfo_liar_text`` within 0.01 macro-F1 at 1.57x-2.06x the fp32
posts/s but lost 0.019 on ``misinfo_vmu_text`` (whose head turns the encoder's int8 error, a mean change of 0.039 in its
probabilities, into flipped decisions); smoothed (strength 0.9 chosen, as on every MiniLM and USE-m graph measured but
``hate_text_frozen_davidson``'s, 0.8), the probabilities moved a third as much there and it lost nothing (-0.003) at
1.77x, but the ``Mul`` before each product costs 3-13 % of the speed (``hate_text_multilingual`` 1.92x plain, 1.68x
smoothed), and macro-F1 does not always follow (``hate_text_frozen_davidson``: 0.0062 plain, 0.0107 smoothed), so ``faim
export`` smooths only when the plain export falls short. Keeping ``Attention`` in fp32 lost 0.012 macro-F1 on
``hate_text_frozen`` at 1.45x the fp32 posts/s (that ``Attention`` is then half the int8 graph's time). Measured earlier
on AVX2 cores without VNNI, where the int8 products run only about 1.6x as fast as in fp32 and the whole gains far less:
one scale per tensor instead of per channel lost 0.028, static quantization (activation scales fixed from 256 training
posts) 0.024-0.027 and ran no faster."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnxruntime.quantization import QuantType, quantize_dynamic

from faim.data.post import Post
from faim.export.smoothing import Feeds, outputs_and_peaks, smoothed
from faim.export.staging import staged, write_manifest
from faim.runtime.bundle import read_bundle
from faim.runtime.model import ExportedModel

STRENGTHS = (0.5, 0.7, 0.8, 0.9)
"""Smoothing strengths tried on each graph, besides none (``faim.export.smoothing``)."""
CALIBRATION_POSTS = 256
"""Posts drawn for the smoothing, by ``calibration_sample``."""
MAX_DROP = 0.01
"""The largest fall of a task's macro-F1 from fp32 to int8 (``faim.eval.quantization.QuantizationCheck.drop``) an int8
export is kept with by default (``faim export --max-drop``): plain int8 held six of the seven recipes measured within
it, and smoothing the seventh."""


def quantize_export(source: str | Path, target: str | Path, calibration: Sequence[Post] = ()) -> Path:
    """Write ``source`` (an fp32 export) to ``target`` with its encoder graphs quantized to int8; ``target`` is
    replaced atomically if it exists, ``source`` is left as it is.

    With ``calibration`` posts (their labels are not read), each encoder graph is first smoothed at the strength,
    none or one of ``STRENGTHS``, whose int8 graph gives outputs closest to the fp32 graph's on the posts' elements;
    the manifest records each graph's under ``"smoothing"`` (``null``: none).
    """
    source, target = Path(source), Path(target)
    manifest = read_bundle(source)
    feeds = part_feeds(source, calibration) if calibration else {}
    strengths = {}
    with staged(target) as staging:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        for entry in manifest["encoders"].values():
            for part in entry["parts"]:
                graph = part["graph"]
                strengths[graph] = quantize_graph(source / graph, staging / graph, feeds.get(graph, []))
        write_manifest(staging, manifest | {"quantized": "int8", "smoothing": strengths})
    return target


def quantize_graph(source: Path, target: Path, feeds: list[Feeds]) -> float | None:
    """Quantize the graph at ``source`` into ``target``; with ``feeds``, smoothed first at the strength (``None``:
    not smoothed) whose int8 outputs differ least from the fp32 graph's on them (mean squared difference of every
    output), which is returned."""
    if not feeds:
        quantized(source, target)
        return None
    model = onnx.load(str(source))
    reference, peaks = outputs_and_peaks(model, feeds)
    candidate = target.with_name(f"{target.stem}.smoothed.onnx")
    best, best_error = None, np.inf
    for strength in (None, *STRENGTHS):
        if strength is not None:
            onnx.save(smoothed(model, peaks, strength), str(candidate))
        trial = target.with_name(f"{target.stem}.trial.onnx")
        quantized(source if strength is None else candidate, trial)
        error = float(np.mean([np.mean((a - b) ** 2) for a, b in zip(run_graph(trial, feeds), reference)]))
        if error < best_error:
            best, best_error = strength, error
            trial.replace(target)
        else:
            trial.unlink()
    candidate.unlink(missing_ok=True)
    return best


def quantized(source: Path, target: Path) -> None:
    """The graph at ``source`` with the weights of its matrix products (``MatMul``, a fused ``Attention``) in int8,
    one scale per output channel, activations quantized per batch as it runs, written to ``target``."""
    logging.disable(logging.WARNING)  # onnxruntime advises its pre-processing on the root logger
    try:
        quantize_dynamic(
            source, target, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul", "Attention"]
        )
    finally:
        logging.disable(logging.NOTSET)


def run_graph(path: Path, feeds: list[Feeds]) -> list[np.ndarray]:
    """Every output of the graph at ``path`` over ``feeds``, each output's batches concatenated."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    runs = [session.run(None, feed) for feed in feeds]
    return [np.concatenate([run[index] for run in runs]) for index in range(len(runs[0]))]


def part_feeds(export: Path, posts: Sequence[Post], batch_size: int = 16) -> dict[str, list[Feeds]]:
    """Each encoder graph of ``export`` → its inputs for the elements of the readable ``posts`` it embeds (every
    kind it reads), ``batch_size`` elements at a time, as the runtime preprocesses them."""
    model = ExportedModel(export)
    read, _ = model.read(posts)
    manifest = read_bundle(export)
    feeds = {}
    for name, entry in manifest["encoders"].items():
        kinds = [kind for kind in model.encoders if manifest["kinds"][kind] == name]
        if not kinds:
            continue
        elements = [element for _, found in read for kind in kinds for element in found[kind]]
        for part, (preprocess, names, _) in zip(entry["parts"], model.encoders[kinds[0]].parts):
            feeds[part["graph"]] = [
                dict(zip(names, preprocess(elements[start : start + batch_size])))
                for start in range(0, len(elements), batch_size)
            ]
    return feeds


def calibration_sample(posts: Sequence[Post], size: int = CALIBRATION_POSTS, seed: int = 0) -> list[Post]:
    """``size`` of ``posts`` drawn without replacement (all of them when there are fewer), the same for a seed."""
    if len(posts) <= size:
        return list(posts)
    return [posts[index] for index in sorted(np.random.default_rng(seed).choice(len(posts), size, replace=False))]
