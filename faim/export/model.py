"""``export_model``: a detector written as graphs plus everything its preprocessing and calibration need: ONNX
graphs for ``faim.runtime``, or torch.export programs (pt2) for ``faim.export.programs.load_export`` (see
``faim.runtime.bundle`` for the layout).

After writing, each graph is read back, run (by onnxruntime, or as the loaded program) on the example inputs it was
traced on and compared with the eager module; a graph that computes something else (a branch dropped or
specialised away in tracing) fails the export, naming it, instead of being written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import torch
from PIL import Image
from torch import nn

from faim.artifact import relative_paths
from faim.artifact_manifest import GRAPH_FORMATS
from faim.detector import Detector
from faim.encoders.stack import encoder_parts
from faim.export.fusions import MASK_INPUT
from faim.export.graphs import BagGraph, FusionGraph, TensorGraph, TextGraph, write_onnx
from faim.export.preprocessing import preprocessing_spec
from faim.export.programs import ProgramGraph, write_program
from faim.export.staging import staged, write_manifest
from faim.model import evaluating
from faim.runtime.bundle import FORMAT_VERSION, ORT_VERSION, ExportError
from faim.runtime.model import session
from faim.runtime.preprocess import part_preprocessing
from faim.version import __version__

EXAMPLE_ELEMENTS = 3
"""Elements (and posts) in the example inputs graphs are traced on: more than one, so no axis is specialised to 1."""

TOLERANCE = 1e-4
"""Largest difference between a graph's outputs and the eager module's on the example inputs."""

TOKENS = ["input_ids", MASK_INPUT], [{0: "N", 1: "T"}] * 2
GRAPHS: dict[str, tuple[type[nn.Module], list[str], list[dict[int, str]]]] = {
    "text": (TextGraph, *TOKENS),
    "pieces": (TextGraph, *TOKENS),
    "e5_pieces": (TextGraph, *TOKENS),
    "ngrams": (BagGraph, ["indices", "offsets", "weights"], [{0: "M"}, {0: "N"}, {0: "M"}]),
    "image": (TensorGraph, ["inputs"], [{0: "N"}]),
    "meta": (TensorGraph, ["inputs"], [{0: "N"}]),
}
"""Per kind of preprocessing: the module an encoder part is traced in, its graph's inputs and their dynamic axes."""

FUSED_KINDS = ("text", "pieces")
"""Kinds of preprocessing whose encoders are transformers reading token ids: their ONNX graphs are rewritten into
onnxruntime's fused operators (``faim.export.fusions``)."""

TEXTS = ("text", "pieces", "e5_pieces", "ngrams")
"""Kinds of preprocessing that read text."""

SAMPLE_TEXTS = [
    "Those people h4t3 us!! all of them",
    "  spaces\tand   tabs ",
    "ça va? Привет мир, 東京 2024 😀😀 🤬",
    "a Cyrillic h\u0430te, ｆｕｌｌ width",
    " ".join(f"word{index} and more" for index in range(400)),
]
"""Texts the runtime's preprocessing must turn into the encoder's own inputs before an export is kept; the last is
longer than any encoder reads, so that it is cut as the encoder cuts it."""


def export_model(detector: Detector, directory: str | Path, graph_format: str = "onnx") -> Path:
    """Write ``detector`` as an exported model to ``directory`` (replaced atomically if it exists), its graphs in
    ``graph_format`` (one of ``GRAPH_FORMATS``), traced in eval mode; each of the model's modules is left in the mode
    it was in.

    Raises:
        ExportError: For a model or a preprocessing the runtime cannot repeat, or a graph whose outputs differ from
            the eager module's, naming the encoder or the graph.
    """
    if graph_format not in GRAPH_FORMATS:
        raise ExportError(f"graph format {graph_format!r} is not one of {', '.join(GRAPH_FORMATS)}")
    model = detector.model
    target = Path(directory)
    fusion_graph = f"fusion.{graph_format}"
    with staged(target) as staging, evaluating(model):  # modes put back before the export takes its place
        kinds = {kind: model.routes[kind] for kind in model.fused_kinds}
        encoders = {
            name: export_encoder(name, model.encoders[name], staging, graph_format)
            for name in sorted(set(kinds.values()))
        }
        export_fusion(detector, encoders, staging / fusion_graph)
        manifest = {
            "format": FORMAT_VERSION,
            "faim_version": __version__,
            "torch_version": torch.__version__,
            **({ORT_VERSION: onnxruntime.__version__} if graph_format == "onnx" else {}),
            "source": detector.source,
            "graph_format": graph_format,
            "max_elements": detector.max_elements,
            "kinds": kinds,
            "encoders": {name: relative_paths(entry, staging) for name, entry in encoders.items()},
            "fusion": {"graph": fusion_graph, "kinds": list(model.fused_kinds), "dim": model.fusion.output_dim},
            "tasks": [
                {
                    "name": task.name,
                    "type": task.type,
                    "labels": list(task.labels),
                    "threshold": detector.calibration.thresholds.get(task.name),
                    "temperature": detector.calibration.temperatures[task.name],
                    "logit_shift": detector.calibration.logit_shifts[task.name],
                }
                for task in detector.tasks
            ],
            "pool_by_image": detector.pool_by_image,
        }
        write_manifest(staging, manifest)
    return target


def export_encoder(name: str, encoder: nn.Module, staging: Path, graph_format: str) -> dict[str, Any]:
    """Write one encoder's graphs (one per member of a stack: the runtime sets their embeddings side by side) and
    preprocessing; returns its manifest entry."""
    members = encoder_parts(encoder)
    parts = []
    for index, member in enumerate(members):
        label = f"encoder {name!r} ({type(member).__name__})"
        folder = staging / "encoders" / name / (str(index) if len(members) > 1 else "")
        spec = preprocessing_spec(member.preprocessor(), folder, label)
        wrapper, names, axes = GRAPHS[spec["type"]]
        same_preprocessing(label, member.preprocessor(), spec, names)
        inputs = example_inputs(member.preprocessor(), spec["type"])
        graph = folder / f"encoder.{graph_format}"
        traced(label, wrapper(member), inputs, names, ["embeddings"], axes, graph, spec["type"] in FUSED_KINDS)
        parts.append({"graph": str(graph), "inputs": names, "preprocess": spec, "dim": int(member.output_dim)})
    return {"parts": parts, "dim": int(encoder.output_dim)}


def export_fusion(detector: Detector, encoders: dict[str, dict[str, Any]], path: Path) -> None:
    """Write the fusion-and-heads graph, traced on random element embeddings of every fused kind, once the model has
    read them as it scores (``WholePostModel.logits``), whose fusion's embeddings and heads' logits are checked
    (``check_fused``, ``check_logits``), as the graph repeats what they give and the runtime does not run them.

    Raises:
        ExportError: Naming the graph, for a fusion or head whose outputs have another shape than the model reads.
    """
    model = detector.model
    module = FusionGraph(model, detector.tasks, detector.calibration)
    generator = torch.Generator().manual_seed(0)
    inputs: list[torch.Tensor] = []
    for kind in module.kinds:
        dim = encoders[model.routes[kind]]["dim"]
        inputs.append(torch.randn(EXAMPLE_ELEMENTS, EXAMPLE_ELEMENTS, dim, generator=generator))
        mask = torch.ones(EXAMPLE_ELEMENTS, EXAMPLE_ELEMENTS, dtype=torch.bool)
        mask[0, 1:] = False  # a post with one element, one with none of this kind
        mask[1] = False
        inputs.append(mask)
    try:
        with torch.no_grad():
            model.logits(dict(zip(module.kinds, zip(inputs[::2], inputs[1::2]))))
    except ValueError as error:
        raise ExportError(f"the fusion and heads: {error}; nothing was exported") from error
    axes = [axes for kind in module.kinds for axes in ({0: "B", 1: f"n_{kind}"}, {0: "B", 1: f"n_{kind}"})]
    traced("the fusion and heads", module, tuple(inputs), module.input_names(), module.output_names(), axes, path)


def written_file(setting: str, name: str) -> Path:
    """A file a preprocessing ``spec`` being written names, by its path as written (a ``FileResolver`` for the
    export's own check, before the files are listed)."""
    return Path(name)


def same_preprocessing(label: str, preprocess: Any, spec: dict[str, Any], names: list[str]) -> None:
    """Check that ``faim.runtime``'s preprocessing of ``SAMPLE_TEXTS`` (read from what ``spec`` names) gives the
    encoder's own inputs (``names``) for a part that reads text.

    Raises:
        ExportError: Naming the encoder and the first input that differs.
    """
    if spec["type"] not in TEXTS:
        return
    expected = preprocess(SAMPLE_TEXTS)
    got = part_preprocessing(spec, written_file)()(SAMPLE_TEXTS)
    for name, have in zip(names, got):
        want = expected[name].numpy()
        if want.shape != have.shape or not np.allclose(want, have, atol=1e-6):
            raise ExportError(
                f"{label}: faim.runtime's preprocessing gives another {name!r} than the encoder's for the same "
                "texts; nothing was exported"
            )


def traced(
    label: str,
    module: nn.Module,
    inputs: tuple[torch.Tensor, ...] | dict[str, torch.Tensor],
    input_names: list[str],
    output_names: list[str],
    axes: list[dict[int, str]],
    path: Path,
    fuse: bool = False,
) -> None:
    """Export ``module`` to ``path`` in the format its suffix names (``.onnx`` or ``.pt2``; an ONNX graph with
    onnxruntime's fused operators when ``fuse``), read the graph back and check its outputs on ``inputs`` against
    the eager module's. A fused graph whose attention, made to read the padding mask itself, does not score as the
    module does (its bias held more than the padding: a causal mask, say) is written again with that one step left
    out, and one that still does not, or that onnxruntime cannot open (the fusions rewrote GPT-2's layers into
    operators of the wrong rank), is written unfused before the export fails."""
    args = tuple(inputs[name] for name in input_names) if isinstance(inputs, dict) else tuple(inputs)
    with torch.no_grad():
        expected = module(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    fused = fuse and path.suffix == ".onnx"
    for fusing, attention_reads_mask in ((True, True), (True, False), (False, False)) if fused else ((False, False),):
        try:
            if path.suffix == ".pt2":
                write_program(module, args, axes, path)
            else:
                write_onnx(module, args, input_names, output_names, axes, path, fusing, attention_reads_mask)
        except Exception as error:
            raise ExportError(f"{label}: torch.export could not trace it to {path.suffix[1:]}: {error}") from error
        try:
            difference = graph_difference(path, dict(zip(input_names, args)), output_names, expected)
        except ExportError as error:  # onnxruntime cannot open the graph
            if fusing:
                continue
            raise ExportError(f"{label}: {error}; nothing was exported") from None
        if difference is None:
            return
    raise ExportError(f"{label}: the exported graph's {difference}; nothing was exported")


def graph_difference(
    path: Path, inputs: dict[str, torch.Tensor], output_names: list[str], expected: tuple[torch.Tensor, ...]
) -> str | None:
    """How the graph at ``path`` departs from ``expected`` on ``inputs`` (the first output off by more than
    ``TOLERANCE`` or of another shape), or ``None`` where it does not."""
    graph = ProgramGraph(path) if path.suffix == ".pt2" else session(path)
    got = graph.run(output_names, {name: value.numpy() for name, value in inputs.items()})
    for name, want, have in zip(output_names, expected, got):
        gap = float(np.max(np.abs(want.numpy() - have))) if have.size else 0.0
        if want.shape != have.shape or gap > TOLERANCE:
            return (
                f"{name!r} differs from the model's ({tuple(have.shape)} against {tuple(want.shape)}, largest "
                f"difference {gap:.2g})"
            )
    return None


def example_inputs(preprocess: Any, kind: str) -> dict[str, torch.Tensor] | tuple[torch.Tensor, ...]:
    """Example inputs of an encoder part, made by its own preprocessor: texts of different lengths, pictures of
    different shapes, metadata with a field missing."""
    if kind in TEXTS:
        texts = ["an example", "a longer example of a post's text", "one more"][:EXAMPLE_ELEMENTS]
        return dict(preprocess(texts))
    if kind == "image":
        sizes = [(48, 32), (32, 48), (40, 40)][:EXAMPLE_ELEMENTS]
        pictures = [Image.new("RGB", size, (40 * i, 90, 200 - 40 * i)) for i, size in enumerate(sizes)]
        return (preprocess(pictures),)
    fields = preprocess.fields
    return (
        preprocess(
            [{field: float(i + j) for j, field in enumerate(fields)} for i in range(EXAMPLE_ELEMENTS - 1)] + [{}]
        ),
    )
