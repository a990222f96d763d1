"""torch.export programs (``faim export --format pt2``): each graph written as an ExportedProgram archive, read back
without unpickling anything, and an export of them scored with torch as ``faim.runtime`` scores an ONNX one.

``torch.export.load`` unpickles some entries of an archive (tensors of a subclass, custom and opaque objects, legacy
weight files, and the example inputs, falling back to full unpickling when the safe reader refuses them). So
``load_program`` reads the archive's table of contents and its JSON payload tables first and refuses every entry
that would be unpickled, naming it; only then does ``torch.export.load`` read it. ``write_program`` writes archives
that hold no such entry: the graph as JSON, plain tensors as raw bytes, no example inputs.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from faim.export.graphs import dynamic_shapes, exporter_notes_silenced
from faim.runtime.bundle import ExportError
from faim.runtime.model import ExportedModel

GRAPH_FORMAT = "pt2"
ENTRIES = re.compile(
    r"archive_format|archive_version|byteorder|\.data/version|\.data/serialization_id|models/model\.json"
    r"|data/weights/model_weights_config\.json|data/weights/weight_\d+"
    r"|data/constants/model_constants_config\.json|data/constants/tensor_\d+|data/sample_inputs/model\.pt"
)
"""Every entry (below the archive's top folder) an archive ``load_program`` accepts may hold."""
PAYLOAD_TABLES = {
    "data/weights/model_weights_config.json": "weight_",
    "data/constants/model_constants_config.json": "tensor_",
}
"""The payload tables of an archive, with the file-name prefix of the raw tensors each may list."""
SAMPLE_INPUTS = "data/sample_inputs/model.pt"


def write_program(module: nn.Module, inputs: tuple[torch.Tensor, ...], axes: list[dict[int, str]], path: Path) -> None:
    """Export ``module`` on example ``inputs`` with torch.export and save it to ``path`` without its example inputs,
    the one part ``torch.export.save`` pickles. Every axis in ``axes`` is ``Dim.DYNAMIC``: the bounds tracing finds
    (a text encoder's longest sequence, its position table) are kept as checks in the program, as the ONNX
    exporter keeps them, and axes that must be equal are found equal by tracing.

    Raises:
        torch.export errors as they come; the caller names the module.
    """
    module.eval()
    with exporter_notes_silenced(), torch.no_grad():
        program = torch.export.export(
            module, inputs, dynamic_shapes=dynamic_shapes(module, axes, bounded=True), strict=False
        )
    program.example_inputs = None
    torch.export.save(program, str(path))


def check_archive(path: Path) -> None:
    """Refuse an archive holding anything ``torch.export.load`` would unpickle.

    Raises:
        ExportError: Naming the archive and the first entry that is not a raw tensor, JSON or an empty placeholder.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise ExportError(f"{path}: not a torch.export archive ({error})") from error
    with archive:
        infos = archive.infolist()
        roots = {info.filename.split("/", 1)[0] for info in infos}
        if len(roots) != 1:
            raise ExportError(f"{path}: not a torch.export archive (expected one top folder, found {sorted(roots)})")
        root = roots.pop() + "/"
        entries = {info.filename[len(root) :]: info for info in infos if not info.is_dir()}
        for name in entries:
            if not ENTRIES.fullmatch(name):
                raise ExportError(f"{path}: entry {name!r} is not one faim writes (it could be unpickled on load)")
        if entries.get(SAMPLE_INPUTS) is not None and entries[SAMPLE_INPUTS].file_size:
            raise ExportError(f"{path}: entry {SAMPLE_INPUTS!r} holds pickled example inputs")
        for table, prefix in PAYLOAD_TABLES.items():
            if table not in entries:
                raise ExportError(f"{path}: entry {table!r} is missing")
            for name, payload in payload_table(path, table, archive.read(root + table)).items():
                if payload.get("use_pickle") or not str(payload.get("path_name", "")).startswith(prefix):
                    raise ExportError(f"{path}: {table} stores {name!r} as a pickled object, not a raw tensor")


def payload_table(path: Path, table: str, content: bytes) -> dict[str, dict[str, Any]]:
    """The payloads the table ``table`` of the archive at ``path`` lists (its ``content``, JSON): each tensor's name
    with where and how it is stored (``path_name``, ``use_pickle``); a table listing none gives none.

    Raises:
        ExportError: Naming the archive and the table, where it is not JSON (and why), or not an object whose
            ``config`` maps each name to an object.
    """
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExportError(f"{path}: {table} is not JSON ({error})") from None
    payloads = data.get("config", {}) if isinstance(data, dict) else None
    if not isinstance(payloads, dict) or not all(isinstance(payload, dict) for payload in payloads.values()):
        raise ExportError(f"{path}: {table} is not a table of payloads (an object whose config maps names to objects)")
    return payloads


def load_program(path: str | Path) -> torch.export.ExportedProgram:
    """An ExportedProgram archive read back after ``check_archive`` has found nothing in it to unpickle.

    Raises:
        ExportError: For an archive with an entry that would be unpickled, or one torch.export cannot read.
    """
    path = Path(path)
    check_archive(path)
    try:
        return torch.export.load(str(path))
    except Exception as error:
        raise ExportError(f"{path}: torch.export could not read it: {error}") from error


class ProgramGraph:
    """One program of a pt2 export run as the runtime runs an onnxruntime session: ``run(names, feeds)`` takes the
    inputs in the graph's input order (as ``ExportedModel`` builds them) and returns every output in order. torch's
    own thread setting applies."""

    def __init__(self, path: Path) -> None:
        self.module = load_program(path).module()

    def run(self, names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():
            outputs = self.module(*(torch.from_numpy(np.ascontiguousarray(value)) for value in feeds.values()))
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        if names is not None and len(names) != len(outputs):
            raise ExportError(f"the program returns {len(outputs)} outputs, expected {len(names)} ({names})")
        return [output.detach().numpy() for output in outputs]


def load_export(directory: str | Path) -> ExportedModel:
    """Load a pt2 export (``faim export --format pt2``) for scoring with torch: ``score`` and ``embed`` as
    ``faim.runtime.load`` gives them for an ONNX export; every file's sha256 is checked and nothing is unpickled.

    Raises:
        ExportError: When ``directory`` is not a pt2 export of this format, a file is missing or modified, or an
            archive holds an entry that would be unpickled.
    """
    return ExportedModel(directory, open_graph=ProgramGraph, graph_format=GRAPH_FORMAT)
