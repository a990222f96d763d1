"""``ExportedModel``: an exported detector scored with onnxruntime, ``tokenizers``, Pillow and numpy, no torch."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import onnxruntime

from faim.artifact_manifest import folder_given, read_meta_fields
from faim.data.elements import (
    GIVEN_POSTS,
    PostError,
    check_posts,
    checked_elements,
    overfull,
    posts_to_read,
    read_each,
    readable_posts,
    warn_overfull,
)
from faim.data.post import Post, length_batches
from faim.data.unheld import warn_unread
from faim.decisions import (
    check_task_type,
    decide,
    decision_probabilities,
    refuse_nonfinite,
    score_rows,
    task_spec,
)
from faim.file_digests import file_finder
from faim.preprocess.pixels import is_number
from faim.runtime.bundle import (
    EMBEDDING,
    ORT_VERSION,
    ExportError,
    FileResolver,
    check_graph_format,
    elements_names,
    fusion_outputs,
    logits_name,
    manifest_entry,
    probabilities_name,
    read_bundle,
    setting,
    task_labels,
    whole_number,
)
from faim.runtime.preprocess import Preprocessing, part_preprocessing


class Graph(Protocol):
    """A graph of an export ready to run: ``run(output_names, feeds)`` returns the outputs as arrays, in order
    (an onnxruntime session, or ``faim.export.programs.ProgramGraph`` for a pt2 export)."""

    def run(self, output_names: list[str] | None, input_feed: dict[str, Any]) -> list[Any]: ...


def session(path: Path, threads: int | None = None, remedy: str = "") -> onnxruntime.InferenceSession:
    """An onnxruntime session on the CPU for one graph (``threads``: its intra-op threads; default: one per core).

    Raises:
        ExportError: Naming ``path``, the onnxruntime installed and why, where it cannot open the graph (one a later
            onnxruntime wrote), followed by ``remedy`` (``reading_remedy``: what to do).
    """
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime's errors (InvalidProtobuf, Fail, ...) share no base class but Exception
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        installed = onnxruntime.__version__
        raise ExportError(f"{path}: onnxruntime {installed} cannot open this graph ({reason}){remedy}") from None


def reading_remedy(written_with: str | None) -> str:
    """What to do where the onnxruntime installed cannot open a graph of an export written with onnxruntime
    ``written_with`` (as its manifest records it; ``None`` where it does not, as in an export an earlier faim wrote):
    the end of ``session``'s error, which catches every error of onnxruntime's (they share no base class but
    ``Exception``), so it is offered where the version is what differs."""
    installed = onnxruntime.__version__
    written = (
        f"the export was written with onnxruntime {written_with}: install that one "
        f"(pip install 'onnxruntime=={written_with}')"
        if written_with
        else "the export does not record the onnxruntime it was written with: install the one it was exported with"
    )
    return (
        f"; if the onnxruntime installed is what differs (the reason above may be another: memory, a damaged file), "
        f"{written}, or export the model again where onnxruntime {installed} is installed"
    )


@dataclass(frozen=True)
class ExportedTask:
    """A task of an exported model: its head type, label names and (binary) decision threshold."""

    name: str
    type: str
    labels: tuple[str, ...]
    threshold: float | None

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> ExportedTask:
        """The task an entry of a manifest's ``tasks`` describes.

        Raises:
            KeyError: Naming a key the entry lacks.
            ValueError: Naming the task, where its labels are not a list of label names fitting its type
                (``task_labels``), or as ``__post_init__`` refuses it.
        """
        return cls(entry["name"], entry["type"], task_labels(entry), entry["threshold"])

    def __post_init__(self) -> None:
        """Refuse a task of a type no head has, or a binary task whose threshold is not a number from 0 to 1
        (decisions are made at it).

        Raises:
            ValueError: Naming the task and its type or threshold.
        """
        check_task_type(self.name, self.type)
        threshold = self.threshold
        if self.type == "binary" and not (is_number(threshold) and 0 <= threshold <= 1):
            raise ValueError(f"task {self.name!r}: threshold {threshold!r} is not a number from 0 to 1")

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one post's logits or probabilities as the fusion graph gives them: ``()`` for a binary task
        (one number), ``(labels,)`` for a multiclass or multilabel one."""
        return () if self.type == "binary" else (len(self.labels),)

    def check_outputs(self, outputs: Signature) -> None:
        """Refuse the task where the fusion graph (its ``outputs``) gives no logits or probabilities for it, or gives
        them for another count of labels than the task names (a label left unscored, or a score left unnamed).

        Raises:
            ValueError: Naming the task, the output and, where the count differs, the labels and the graph's shape.
        """
        for name in (logits_name(self.name), probabilities_name(self.name)):
            if name not in outputs:
                raise ValueError(f"task {self.name!r}: its graph gives no {name!r}")
            if differs(outputs[name], self.row_shape):
                raise ValueError(
                    f"task {self.name!r} ({self.type}): labels: {list(self.labels)} do not fit its graph's {name!r} "
                    f"of shape {list(outputs[name])}"
                )


def exported_tasks(entries: Any) -> list[ExportedTask]:
    """The tasks a manifest's ``tasks`` lists (``ExportedTask.from_entry``), at least one: an export of no task would
    score rows holding only the posts' ids.

    Raises:
        KeyError, TypeError, ValueError: On an entry no export writes, or no entry (read within ``manifest_entry``).
    """
    tasks = [ExportedTask.from_entry(entry) for entry in entries]
    if not tasks:
        raise ValueError(f"expected at least one task, got {entries!r}")
    return tasks


Signature = dict[str, tuple[Any, ...]]
"""A graph's inputs or outputs by name, each with its shape: a dimension a whole number where the graph fixes it,
else a name or None (a post's batch, a text's length)."""


def signature(graph: Graph) -> tuple[Signature, Signature] | None:
    """The inputs and outputs of ``graph`` where it tells them without running (an onnxruntime session); None for a
    graph that does not (a torch.export program, a graph file left unopened)."""
    if not isinstance(graph, onnxruntime.InferenceSession):
        return None
    inputs = {node.name: tuple(node.shape) for node in graph.get_inputs()}
    return inputs, {node.name: tuple(node.shape) for node in graph.get_outputs()}


def differs(shape: tuple[Any, ...], row: tuple[int, ...]) -> bool:
    """Whether a graph's output ``shape`` for a batch of posts or elements is known to differ from ``row`` beyond its
    first dimension, the batch (a dimension the graph leaves unfixed fits any, and a shape of no dimension, an output
    whose rank the graph does not tell, any row)."""
    found = shape[1:]
    if not shape:
        return False
    return len(found) != len(row) or any(isinstance(a, int) and a != b for a, b in zip(found, row))


def check_inputs(inputs: Signature, fed: list[str]) -> None:
    """Refuse a graph whose ``inputs`` are not those the runtime feeds it (``fed``).

    Raises:
        ValueError: Naming both.
    """
    if set(inputs) != set(fed):
        raise ValueError(f"inputs: {sorted(fed)} are not its graph's {sorted(inputs)}")


EncoderPart = tuple[Callable[[], Preprocessing], list[str], Path]
"""A part of an exported encoder as its manifest entry gives it: what builds its preprocessing
(``part_preprocessing``), its graph's input names and its graph's file."""


def encoder_entry(entry: dict[str, Any], files: FileResolver) -> tuple[int, list[EncoderPart]]:
    """An exported encoder's manifest ``entry`` read: its embedding size and its parts, each file they name found by
    ``files``; nothing is opened.

    Raises:
        KeyError, TypeError, ValueError: On an entry no export writes (read within ``manifest_entry``).
    """
    parts = [
        (part_preprocessing(part["preprocess"], files), list(part["inputs"]), files("graph", part["graph"]))
        for part in entry["parts"]
    ]
    return setting(entry, "dim", whole_number), parts


class ExportedEncoder:
    """One exported encoder: each part preprocesses the elements and runs its graph; the parts' embeddings side by
    side make the encoder's ``[N, dim]``. Called by the collation step like an encoder's preprocessor (``check``
    names a bad element). Built from its manifest entry (``encoder_entry``), each part's preprocessing built and its
    graph opened by ``open_graph``."""

    def __init__(self, dim: int, parts: list[EncoderPart], open_graph: Callable[[Path], Graph]) -> None:
        self.dim = dim
        self.parts = [(build(), inputs, open_graph(graph)) for build, inputs, graph in parts]

    def check_graphs(self) -> None:
        """Refuse the encoder where a part's graph reads other inputs than the part's entry names, or its parts'
        graphs give embeddings of another size than its ``dim`` (those that do not tell their shapes pass).

        Raises:
            ValueError: Naming the part and its inputs, or the ``dim`` and the sizes the graphs give.
        """
        sizes = []
        for index, (_, names, graph) in enumerate(self.parts):
            found = signature(graph)
            if found is None:
                return
            inputs, outputs = found
            try:
                check_inputs(inputs, names)
            except ValueError as error:
                raise ValueError(f"parts[{index}]: {error}") from error
            shape = next(iter(outputs.values()))
            sizes.append(shape[-1] if shape else None)  # a graph not telling the rank of its output tells no size
        if all(isinstance(size, int) for size in sizes) and sum(sizes) != self.dim:
            given = " + ".join(map(str, sizes))
            raise ValueError(f"dim: {self.dim} is not the size of its graphs' embeddings ({given})")

    def check(self, element: Any) -> None:
        for preprocess, _, _ in self.parts:
            check = getattr(preprocess, "check", None)
            if check is not None:
                check(element)

    def __call__(self, elements: list[Any]) -> np.ndarray:
        if not elements:
            return np.zeros((0, self.dim), np.float32)
        embedded = []
        for preprocess, names, graph in self.parts:
            embedded.append(graph.run(None, dict(zip(names, preprocess(elements))))[0])
        return np.concatenate(embedded, axis=-1)


def fused_encoders(
    root: Path, manifest: dict[str, Any], fused: list[str], open_graph: Callable[[Path], Graph], files: FileResolver
) -> dict[str, ExportedEncoder]:
    """Each kind of ``fused`` (those the fusion graph reads) with the encoder of the export in ``root`` reading it, as
    its ``manifest`` names them (``kinds``) and describes each (``encoders``, every entry read), the files each names
    found by ``files``; an encoder two kinds share is built once.

    Raises:
        ExportError: Naming the manifest and the entry that cannot be read (``faim.runtime.bundle.manifest_entry``),
            or whose settings its graphs contradict (``ExportedEncoder.check_graphs``); a fault building an encoder
            from the export's verified files (opening a graph, reading a tokenizer) is raised as it is.
    """
    entries = {}
    with manifest_entry(root, "encoders"):
        for name, entry in manifest["encoders"].items():
            with manifest_entry(root, f"encoders.{name}"):
                entries[name] = encoder_entry(entry, files)
    with manifest_entry(root, "kinds"):
        names = {kind: manifest["kinds"][kind] for kind in fused}
    with manifest_entry(root, "encoders"):
        used = {name: entries[name] for name in names.values()}
    encoders = {name: ExportedEncoder(dim, parts, open_graph) for name, (dim, parts) in used.items()}
    for name, encoder in encoders.items():
        with manifest_entry(root, f"encoders.{name}"):
            encoder.check_graphs()
    return {kind: encoders[name] for kind, name in names.items()}


class ExportedModel:
    """An exported detector (``faim export``): ``score`` and ``embed`` as ``Detector.score`` and ``.embed`` give them,
    from the same posts.

    Args:
        directory: The export; every file's sha256 is checked first.
        threads: Threads each onnxruntime graph computes with (default: one per core).
        open_graph: What makes a graph file runnable (default: an onnxruntime session on the CPU).
        graph_format: The ``graph_format`` the export must have for ``open_graph`` to read it.

    Raises:
        TypeError: Naming the type of a ``directory`` that is no path (``None``, bytes).
        ValueError: For an empty ``directory`` (a variable not set), rather than read the working directory.
        ExportError: When ``directory`` is not an export of this format, a file is missing or modified, its graphs
            are of another format, or its manifest holds an entry no export writes or one its graphs contradict (a
            task's labels, an embedding's size, a graph's inputs: naming the manifest and the entry), or onnxruntime
            cannot open a graph (naming it, the onnxruntime installed and the one the export was written with).
    """

    def __init__(
        self,
        directory: str | Path,
        threads: int | None = None,
        open_graph: Callable[[Path], Graph] | None = None,
        graph_format: str = "onnx",
    ) -> None:
        self.root = folder_given(directory, "an export's")
        manifest = read_bundle(self.root)
        check_graph_format(directory, manifest, graph_format)
        open_graph = open_graph or partial(session, threads=threads, remedy=reading_remedy(manifest.get(ORT_VERSION)))
        self.source = str(directory)
        self.manifest = manifest
        self.files = dict(manifest["files"])
        files = file_finder(self.root, self.files)
        with manifest_entry(self.root, "max_elements"):
            self.max_elements = whole_number(manifest["max_elements"])
        with manifest_entry(self.root, "tasks"):
            self.tasks = exported_tasks(manifest["tasks"])
        with manifest_entry(self.root, "fusion"):
            self.embedding_dim = setting(manifest["fusion"], "dim", whole_number)
            fusion_graph = files("graph", manifest["fusion"]["graph"])
            fused = list(manifest["fusion"]["kinds"])
        self.fusion = open_graph(fusion_graph)
        self.encoders = fused_encoders(self.root, manifest, fused, open_graph, files)
        self.meta_fields = read_meta_fields(self.root, manifest)
        self.check_fusion()

    def check_fusion(self) -> None:
        """Refuse the export where its fusion graph reads other inputs than its kinds feed, gives an embedding of
        another size than the manifest's fusion ``dim``, or gives a task's outputs for another count of labels, or
        none (``ExportedTask.check_outputs``); a graph that does not tell its shapes passes.

        Raises:
            ExportError: Naming the manifest, the entry (``fusion``, ``tasks``) and what disagrees.
        """
        found = signature(self.fusion)
        if found is None:
            return
        inputs, outputs = found
        with manifest_entry(self.root, "fusion"):
            check_inputs(inputs, [name for kind in self.encoders for name in elements_names(kind)])
            if EMBEDDING not in outputs:
                raise ValueError(f"its graph gives no {EMBEDDING!r}")
            shape = outputs[EMBEDDING]
            if differs(shape, (self.embedding_dim,)):
                wrong = f"dim: {self.embedding_dim} is not the size of its graph's {EMBEDDING!r}"
                raise ValueError(f"{wrong} {list(shape)}")
        with manifest_entry(self.root, "tasks"):
            for task in self.tasks:
                task.check_outputs(outputs)

    def read(self, posts: Iterable[Post]) -> tuple[list[tuple[Post, dict[str, list[Any]]]], list[PostError]]:
        """Each post whose elements can be read (pictures decoded, metadata numeric) with its elements, and the
        errors of the others; every post is read once."""
        return read_each(posts, self.elements_of)

    def elements_of(self, post: Post) -> dict[str, list[Any]]:
        """A post's elements by kind, checked (``faim.data.elements.checked_elements``); raises ``PostError``."""
        return checked_elements(post, self.encoders, self.max_elements, {})

    def outputs(self, posts: list[Post]) -> dict[str, np.ndarray]:
        """The fusion graph's outputs (embedding, each task's logits and probabilities) for one batch of posts.

        Raises:
            PostError: On a post that cannot be read.
        """
        read, errors = self.read(posts)
        if errors:
            raise errors[0]
        return self.run([elements for _, elements in read])

    def no_outputs(self) -> dict[str, np.ndarray]:
        """The fusion graph's outputs over no post, as empty float32 arrays of the shapes it gives (embedding
        ``[0, D]``; each task's logits and probabilities ``[0]`` binary, ``[0, C]`` multiclass, ``[0, L]``
        multilabel): the graph itself cannot run on a batch of no post."""
        outputs = {EMBEDDING: np.zeros((0, self.embedding_dim), np.float32)}
        for task in self.tasks:
            for name in (logits_name(task.name), probabilities_name(task.name)):
                outputs[name] = np.zeros((0, *task.row_shape), np.float32)
        return outputs

    def run(self, prepared: list[dict[str, list[Any]]]) -> dict[str, np.ndarray]:
        """The fusion graph's outputs for posts read by ``read`` (their elements, one mapping per post)."""
        feeds = {}
        for kind, encoder in self.encoders.items():
            counts = [len(elements[kind]) for elements in prepared]
            embedded = encoder([element for elements in prepared for element in elements[kind]])
            # at least one slot, masked where no post has the kind: onnxruntime pools an axis of no slots to zeros
            # where the model takes a fusion's learned absent vector
            padded = np.zeros((len(prepared), max(counts, default=0) or 1, encoder.dim), np.float32)
            mask = np.zeros(padded.shape[:2], bool)
            post_index = np.repeat(np.arange(len(prepared)), counts)
            slot_index = np.concatenate([np.arange(count) for count in counts]) if prepared else np.zeros(0, int)
            padded[post_index, slot_index] = embedded
            mask[post_index, slot_index] = True
            embeddings_name, mask_name = elements_names(kind)
            feeds[embeddings_name], feeds[mask_name] = padded, mask
        names = fusion_outputs([task.name for task in self.tasks])
        return dict(zip(names, self.fusion.run(names, feeds)))

    def readable(
        self, posts: Iterable[Post | Mapping[str, Any]], pool_by_image: bool = False
    ) -> tuple[list[Post], list[PostError]]:
        """The posts holding something the model reads whose elements can be read (pictures decoded, metadata
        numeric), and the errors of the others (``empty``: nothing it reads; ``row``: a dict that is no post), in the
        order given (``readable_posts``), as ``faim.Detector``'s ``readable``.

        Raises:
            ValueError: With ``pool_by_image`` (``check_one_by_one``), as ``score`` refuses it.
            TypeError, ValueError: Where the posts are refused (one post given where a list is expected, a ``Post``
                whose id was taken away after it was built: ``given_posts``).
        """
        self.check_one_by_one(pool_by_image)
        return readable_posts(posts, list(self.encoders), self.elements_of)

    def predict(self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64) -> tuple[list[str], dict]:
        """Post ids and the fusion graph's outputs over every post (rows in input order), ``batch_size`` at a time,
        shortest text first (``length_batches``); over no post, every output as an empty array (``no_outputs``).

        Raises:
            TypeError, ValueError: On a ``batch_size`` that is not a whole number, or below 1.
            PostError: On a post that cannot be read, or one holding nothing the model reads (of kind ``empty``:
                ``readable`` sets such posts aside), named by its origin, or where it has none by its index among
                ``posts`` (``posts_to_read``).
        """
        items = posts_to_read(posts, list(self.encoders))
        return [post.id for post in items], self.predict_named(items, batch_size)

    def predict_named(self, posts: list[Post], batch_size: int = 64) -> dict[str, np.ndarray]:
        """``predict``'s outputs of posts as ``posts_to_read`` gives them (each named as an error names it), warning
        once, as ``faim.Detector`` does, of each kind the model reads that none of them holds and of metadata holding
        none of the fields it reads (``warn_unread``), and of those holding more pictures or comments than the model
        reads of a post (``warn_overfull``: ``max_elements``).

        Raises:
            TypeError, ValueError, PostError: As ``predict``, but for the posts ``posts_to_read`` refuses; before a
                graph runs, on the first it would stop at but for a picture that does not decode (``check_posts``),
                as ``faim.Detector`` refuses it.
        """
        kinds = list(self.encoders)
        check_posts(posts, self.encoders, self.max_elements)
        warn_unread(posts, kinds, self.meta_fields)
        warn_overfull(*overfull(posts, kinds, self.max_elements), self.max_elements, kinds, GIVEN_POSTS)
        batches, positions = length_batches(posts, batch_size)
        outputs = [self.outputs(batch) for batch in batches]
        if not outputs:
            return self.no_outputs()
        return {name: np.concatenate([batch[name] for batch in outputs])[positions] for name in outputs[0]}

    def score(
        self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64, pool_by_image: bool = False
    ) -> list[dict[str, Any]]:
        """Per-post probabilities: ``{"id", task: P(positive)}`` for binary tasks, ``{label: p}`` otherwise.

        Raises:
            ValueError: With ``pool_by_image`` (``check_one_by_one``).
            PostError: On a post that cannot be read, or one holding nothing the model reads (as ``predict``).
            ValueError: On a post whose logits of some task are not finite, naming it as ``predict`` names a post
                and the tasks (``faim.decisions.refuse_nonfinite``).
        """
        self.check_one_by_one(pool_by_image)
        named = posts_to_read(posts, list(self.encoders))
        outputs = self.predict_named(named, batch_size)
        refuse_nonfinite(named, self.tasks, {task.name: outputs[logits_name(task.name)] for task in self.tasks})
        probabilities = {task.name: outputs[probabilities_name(task.name)] for task in self.tasks}
        return score_rows([post.id for post in named], self.tasks, probabilities)

    def check_one_by_one(self, pool_by_image: bool) -> None:
        """Raise ``ValueError``, naming the export and what to use instead, where ``pool_by_image`` asks to score or
        read posts pooled by picture: the runtime scores posts one by one."""
        if pool_by_image:
            raise ValueError(
                f"{self.source}: scoring pooled by picture is not available on the exported runtime; "
                "score these posts with the saved model (faim.load, or faim score --pool-by-image)"
            )

    def embed(self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64) -> np.ndarray:
        """Whole-post embeddings ``[N, D]`` (float32), in input order.

        Raises:
            PostError: On a post that cannot be read, or one holding nothing the model reads (as ``predict``).
        """
        _, outputs = self.predict(posts, batch_size)
        return outputs[EMBEDDING]

    def decisions(self, task: str, probabilities: Any) -> np.ndarray:
        """Thresholded decisions for a task, as ``Detector.decisions``: 0/1 for binary, argmax for multiclass,
        per-label 0.5 for multilabel, of an array or the values ``score`` rows give the task
        (``faim.decisions.decision_probabilities``)."""
        spec = task_spec(self.tasks, task, self.source)
        return decide(spec.type, decision_probabilities(spec, probabilities), spec.threshold)


def checked_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of the ONNX export in ``directory`` once everything ``ExportedModel`` checks as it loads the export
    has passed, but without opening its graphs (an onnxruntime session of a large graph takes seconds and its
    memory): what a process checks before starting workers that each load the export, so that a bad one is refused
    there, once.

    Raises:
        ExportError: As ``ExportedModel`` does (but for a graph onnxruntime cannot read).
    """
    return ExportedModel(directory, open_graph=Path).manifest  # each graph found among the listed files, unopened


def load(directory: str | Path) -> ExportedModel:
    """Load an exported model; every file's sha256 is checked and nothing is unpickled.

    Raises:
        TypeError: Naming the type of a ``directory`` that is no path (``None``, bytes).
        ValueError: For an empty ``directory`` (a variable not set), rather than read the working directory.
        ExportError: When ``directory`` is not an export of this format, a file is missing or modified, its
            manifest holds an entry no export writes (naming the manifest and the entry), or onnxruntime cannot open
            a graph (naming it, the onnxruntime installed and the one the export was written with).
    """
    return ExportedModel(directory)


__all__ = ["ExportedModel", "PostError", "load"]
