"""``WholePostModel``: encoders per element kind → fusion → whole-post embedding → task heads.

Composable in plain Python (no recipe needed)::

    model = WholePostModel(
        encoders={"text": TinyTextEncoder(), "image": TinyImageEncoder()},
        fusion=ConcatFusion({"text": 32, "image": 16}),
        heads={"hate": BinaryHead(48)},
    )

``routes`` lets one encoder embed several kinds (e.g. comments with the text encoder) without
duplicating its weights. ``fused_kinds`` limits which kinds the fusion (hence the heads) sees; the others
are still embedded on request (``encode``), e.g. to link posts that share a picture
(``eval.pool_by_image``) without letting the heads memorise pictures.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

import torch
from torch import nn

from faim.data.batch import PostBatch
from faim.data.elements import element_refs
from faim.data.post import Post
from faim.preprocess.meta import MetaRows
from faim.registry import ELEMENT_MODALITIES, recorded_arguments, refusals_named
from faim.wording import plural

Elements = dict[str, tuple[torch.Tensor, torch.Tensor]]


def check_modality(kind: str, encoder: nn.Module) -> None:
    """Refuse ``encoder`` for element kind ``kind`` unless it embeds the kind's modality (``ELEMENT_MODALITIES``).

    Raises:
        ValueError: Naming the kind, the modality it needs and the encoder's.
    """
    if encoder.modality != ELEMENT_MODALITIES[kind]:
        raise ValueError(f"element kind {kind!r} needs a {ELEMENT_MODALITIES[kind]} encoder, got {encoder.modality}")


class WholePostModel(nn.Module):
    """A multimodal post classifier with a shared whole-post embedding.

    Args:
        encoders: Encoder modules by name. Unless ``routes`` says otherwise, each name is also the
            element kind it embeds: ``"text"``, ``"image"`` or ``"comments"``.
        fusion: Module mapping ``{kind: (embeddings [B, n, d], mask [B, n])}`` to ``[B, output_dim]`` (checked as it
            runs: ``check_fused``).
        heads: Task heads by task name, each taking ``[B, D]``.
        routes: Element kind → encoder name, for kinds embedded by an encoder of another name.
        fused_kinds: Element kinds passed to the fusion; ``None``: every kind. The fusion must be built for
            exactly these kinds.

    Raises:
        ValueError: For an unknown kind or encoder, an encoder of the wrong modality, or fused kinds the model does
            not read; for a fusion or a head built for other kinds or sizes than the model gives it (``check_sizes``).
    """

    def __init__(
        self,
        encoders: Mapping[str, nn.Module],
        fusion: nn.Module,
        heads: Mapping[str, nn.Module],
        routes: Mapping[str, str] | None = None,
        fused_kinds: Iterable[str] | None = None,
    ) -> None:
        super().__init__()
        self.encoders = nn.ModuleDict(dict(encoders))
        self.fusion = fusion
        self.heads = nn.ModuleDict(dict(heads))
        self.routes = {name: name for name in encoders} | dict(routes or {})
        for kind, encoder_name in self.routes.items():
            if kind not in ELEMENT_MODALITIES:
                raise ValueError(f"unknown element kind {kind!r}; valid: {sorted(ELEMENT_MODALITIES)}")
            if encoder_name not in self.encoders:
                raise ValueError(f"element kind {kind!r} routes to unknown encoder {encoder_name!r}")
            check_modality(kind, self.encoders[encoder_name])
        self.fused_kinds = self.kinds if fused_kinds is None else sorted(set(fused_kinds))
        unknown = set(self.fused_kinds) - set(self.routes)
        if not self.fused_kinds or unknown:
            given = list(fused_kinds or [])
            raise ValueError(f"fused_kinds must be a non-empty subset of the element kinds {self.kinds}, got {given}")
        check_sizes({kind: self.encoder_for(kind).output_dim for kind in self.fused_kinds}, fusion, self.heads)

    @property
    def kinds(self) -> list[str]:
        """Element kinds this model reads, sorted."""
        return sorted(self.routes)

    def encoder_for(self, kind: str) -> nn.Module:
        return self.encoders[self.routes[kind]]

    def encode(self, batch: PostBatch, drop: Iterable[str] = (), kinds: Iterable[str] | None = None) -> Elements:
        """Embed each kind's elements and lay them out as ``(embeddings [B, n, d], mask [B, n])``, each encoder's
        embeddings checked (``check_embeddings``).

        Kinds in ``drop`` are fully masked (used for unimodal ablations), as if no post had them. ``kinds``
        selects the kinds embedded (default: every kind the model reads).
        """
        dropped = set(drop)
        out: Elements = {}
        for kind in self.kinds if kinds is None else kinds:
            elements = batch.elements[kind]
            encoder = self.encoder_for(kind)
            embeddings = elements.values if elements.encoded else encoder(elements.values)
            check_embeddings(kind, encoder, embeddings, len(elements.post_index))
            padded, mask = elements.scatter(embeddings.float(), batch.size)
            out[kind] = (padded, mask & (kind not in dropped))
        return out

    @property
    def meta_fields(self) -> list[str]:
        """The ``Post.meta`` fields the fusion reads (through the metadata encoder's ``MetaRows``, each of a stack's),
        as ``faim.artifact_manifest.read_meta_fields`` finds them in a saved model or an export; none where the fusion
        reads no metadata."""
        if "meta" not in self.fused_kinds:
            return []
        preprocess = self.encoder_for("meta").preprocessor()
        members = getattr(preprocess, "members", [preprocess])  # a stack's (faim.encoders.stack.StackedPreprocessor)
        return [field for member in members if isinstance(member, MetaRows) for field in member.fields]

    def kinds_with(self, link_kind: str | None) -> list[str]:
        """The fused kinds, plus ``link_kind`` (the kind posts are linked by for pooling) when given.

        Raises:
            ValueError: Naming a ``link_kind`` the model does not read, and the kinds it reads.
        """
        if link_kind and link_kind not in self.routes:
            raise ValueError(f"link_kind {link_kind!r}: not a kind the model reads ({', '.join(self.kinds)})")
        return sorted(set(self.fused_kinds) | ({link_kind} if link_kind else set()))

    def embed(self, batch: PostBatch, drop: Iterable[str] = ()) -> torch.Tensor:
        """Whole-post embeddings ``[B, D]``: the fusion of the ``fused_kinds``."""
        return self.fuse(self.encode(batch, drop, self.fused_kinds))

    def fuse(self, elements: Elements) -> torch.Tensor:
        """Whole-post embeddings ``[B, D]`` from encoded elements (``encode``), checked (``check_fused``); kinds that
        are not fused are ignored."""
        fused = {kind: elements[kind] for kind in self.fused_kinds}
        size = len(next(iter(fused.values()))[0])
        return check_fused(self.fusion, self.fusion(fused), size)

    def forward(self, batch: PostBatch, drop: Iterable[str] = ()) -> dict[str, torch.Tensor]:
        """Logits per task."""
        return self.logits(self.encode(batch, drop, self.fused_kinds))

    def logits(self, elements: Elements) -> dict[str, torch.Tensor]:
        """Logits per task from encoded elements (``encode``); kinds that are not fused are ignored."""
        return self.head_logits(self.fuse(elements))

    def head_logits(self, embedding: torch.Tensor) -> dict[str, torch.Tensor]:
        """Logits per task from whole-post embeddings ``[B, D]``, each head's checked (``check_logits``)."""
        return {name: check_logits(name, head, head(embedding), len(embedding)) for name, head in self.heads.items()}

    def fit_encoders(self, posts: Iterable[Post], max_elements: int) -> None:
        """Fit every encoder that learns from the training data (``Encoder.needs_fit``) on the elements of
        ``posts`` (the training posts) of every kind it embeds, at most ``max_elements`` per post and kind.

        Raises:
            BuildError: An encoder's refusal of its elements (its ``ValueError``), named by its recipe path
                (``model.encoders.text: ...``); any other error it raises (a ``RuntimeError`` on running out of
                memory) comes through as it is.
        """
        posts = list(posts)
        for name, encoder in self.encoders.items():
            if getattr(encoder, "needs_fit", False):
                kinds = [kind for kind, routed in self.routes.items() if routed == name]
                elements = [
                    element for post in posts for kind in kinds for element in element_refs(post, kind, max_elements)
                ]
                with refusals_named(f"model.encoders.{name}"):
                    encoder.fit(elements)

    @torch.no_grad()
    def fit_fusion(self, batches: Iterable[PostBatch]) -> None:
        """Fit a fusion that learns from the training posts before training (``needs_fit``, such as ``align``) on
        the encoded fused elements of ``batches`` (the training loader); any other fusion is left as it is."""
        if getattr(self.fusion, "needs_fit", False):
            self.fusion.fit(self.encode(batch, kinds=self.fused_kinds) for batch in batches)

    @property
    def frozen_kinds(self) -> list[str]:
        """Element kinds whose encoder is frozen (their embeddings can be computed once and cached), sorted."""
        return [kind for kind in self.kinds if getattr(self.encoder_for(kind), "frozen", False)]

    @property
    def frozen_encoders(self) -> bool:
        """Whether every encoder is frozen (their outputs can then be computed once and cached)."""
        return all(getattr(encoder, "frozen", False) for encoder in self.encoders.values())


def model_device(module: nn.Module) -> torch.device | None:
    """Where ``module``'s weights are (its first parameter's device); ``None`` for a module without parameters."""
    weights = next(module.parameters(), None)
    return weights.device if weights is not None else None


def on_model_device(batch: PostBatch, model: nn.Module, device: torch.device | None = None) -> PostBatch:
    """``batch`` moved to ``device``, by default where ``model``'s weights are (``model_device``); as it is for a
    model without parameters."""
    device = device or model_device(model)
    return batch if device is None else batch.to(device)


HALF_PRECISION = (torch.float16, torch.bfloat16)
"""The dtypes of weights ``check_full_precision`` refuses."""


def check_full_precision(model: nn.Module, source: str | None = None) -> None:
    """Refuse ``model`` (read from ``source``, as an error names it where given) whose every weight is in half
    precision (``HALF_PRECISION``: ``model.half()``, ``model.to(torch.bfloat16)``), before it reads a post: faim
    gives its encoders the posts, and its fusion their embeddings, in float32, which such a layer refuses deep inside
    with an error naming neither the model nor what to do. A component of a user's own holding half weights among
    others in float32 (an encoder casting what it is given) is left to read posts.

    Raises:
        ValueError: Naming ``source``, the dtype and saying to put the model back in float32.
    """
    dtypes = {weight.dtype for weight in model.parameters()}
    if dtypes and dtypes <= set(HALF_PRECISION):
        half = ", ".join(sorted(map(str, dtypes)))
        named = f"{source}: " if source else ""
        raise ValueError(
            f"{named}the model's weights are {half} (model.half() or model.to(dtype)), where faim gives its "
            "encoders the posts, and its fusion their embeddings, in float32: call detector.model.float() first"
        )


EVALUATING: dict[int, tuple[int, bool]] = {}
"""Each module some block runs in eval mode (``evaluating``), itself or a module holding it, by its ``id`` (a module's
hash may follow its state, as a torchmetrics ``Metric``'s does): how many blocks do, in this process's threads, and its
mode before the first began."""

EVALUATING_LOCK = threading.Lock()
"""Held while ``EVALUATING`` is read and changed, and the modes of the modules in it with it."""


@contextmanager
def evaluating(module: nn.Module) -> Iterator[None]:
    """Run the block with ``module`` in eval mode; afterwards each of its modules is in the mode it was in, so that
    scoring a model being trained leaves its dropout on. Blocks of several threads overlapping on a module (a model
    scoring posts in each, two models sharing an encoder, one running a part of a model another runs whole) keep it
    in eval mode until the last of them ends, which sets back the mode it had before the first began. A part without
    a mode (a frozen TorchScript module, as scoring's optimised encoders are) is left as it is."""
    parts = [part for part in module.modules() if hasattr(part, "training")]
    with EVALUATING_LOCK:
        for part in parts:
            count, training = EVALUATING.get(id(part), (0, part.training))
            EVALUATING[id(part)] = (count + 1, training)
        module.eval()
    try:
        yield
    finally:
        with EVALUATING_LOCK:
            for part in parts:
                count, training = EVALUATING.pop(id(part))
                if count > 1:
                    EVALUATING[id(part)] = (count - 1, training)
                else:
                    part.training = training


def check_embeddings(kind: str, encoder: nn.Module, embeddings: torch.Tensor, count: int) -> None:
    """Refuse the embeddings ``encoder`` gave (or the cache holds) for ``count`` elements of ``kind`` unless they are
    ``[count, output_dim]``, as the fusion built for its ``output_dim`` reads them, of a floating-point dtype (whole
    numbers cut the gradient, so training would leave the encoder as it was).

    Raises:
        ValueError: Naming the kind, the encoder's class and both shapes, or the dtype given.
    """
    if not embeddings.is_floating_point():
        raise ValueError(
            f"element kind {kind!r}: its encoder ({type(encoder).__name__}) gave embeddings of dtype "
            f"{embeddings.dtype}; an encoder's forward returns floating-point embeddings, through which training "
            "reaches its weights"
        )
    if embeddings.shape != (count, encoder.output_dim):
        given = ", ".join(map(str, embeddings.shape))
        raise ValueError(
            f"element kind {kind!r}: its encoder ({type(encoder).__name__}) gave embeddings of shape [{given}] for "
            f"{plural(count, 'element')}; an encoder's forward returns [N, output_dim], here "
            f"[{count}, {encoder.output_dim}]"
        )


def check_fused(fusion: nn.Module, embedding: torch.Tensor, size: int) -> torch.Tensor:
    """``embedding``, the whole-post embeddings ``fusion`` gave for ``size`` posts, in float32 as ``encode`` gives the
    fusion its elements (a fusion computing in float64 is read as the heads' weights are), when they are
    ``[size, output_dim]``, as the heads built for its ``output_dim`` read them, of a floating-point dtype.

    Raises:
        ValueError: Naming the fusion's class and both shapes, or the dtype given.
    """
    if not embedding.is_floating_point():
        raise ValueError(
            f"the fusion ({type(fusion).__name__}) gave whole-post embeddings of dtype {embedding.dtype}; a fusion's "
            "forward returns floating-point embeddings, through which training reaches its weights and the encoders'"
        )
    if embedding.shape != (size, fusion.output_dim):
        given = ", ".join(map(str, embedding.shape))
        raise ValueError(
            f"the fusion ({type(fusion).__name__}) gave whole-post embeddings of shape [{given}] for a batch of "
            f"{plural(size, 'post')}; a fusion's forward returns [B, output_dim], here [{size}, {fusion.output_dim}]"
        )
    return embedding.float()


LOGITS_SHAPES = {"binary": "[B]", "multiclass": "[B, num_classes]", "multilabel": "[B, num_labels]"}
"""The shape of a head's logits for ``B`` posts, by its ``task_type``."""


def check_logits(task: str, head: nn.Module, logits: torch.Tensor, size: int) -> torch.Tensor:
    """``logits``, those ``head`` (task ``task``'s) gave for ``size`` posts, when they have the shape its
    ``task_type`` gives (``LOGITS_SHAPES``: a binary head's one logit a post, not a column); a head without a
    ``task_type`` is not checked.

    Raises:
        ValueError: Naming the task, the head's class, the shape expected and the shape given.
    """
    task_type = getattr(head, "task_type", None)
    if task_type not in LOGITS_SHAPES:
        return logits
    rank = 1 if task_type == "binary" else 2
    if logits.ndim != rank or logits.shape[0] != size:
        given = ", ".join(map(str, logits.shape))
        squeeze = " (squeeze the last dimension)" if task_type == "binary" and logits.shape == (size, 1) else ""
        raise ValueError(
            f"head {task!r} ({type(head).__name__}, {task_type}) gave logits of shape [{given}] for a batch of {size}; "
            f"a {task_type} head's forward returns {LOGITS_SHAPES[task_type]}{squeeze}"
        )
    return logits


def check_sizes(fused: Mapping[str, int], fusion: nn.Module, heads: Mapping[str, nn.Module]) -> None:
    """Refuse a fusion built for other kinds or sizes than ``fused`` (each fused kind's encoder ``output_dim``), and a
    head built for another size than the fusion's ``output_dim``, as far as a component says what it was built for:
    a registered one records its ``input_dims`` or ``input_dim`` (``faim.registry.recorded_arguments``).

    Raises:
        ValueError: Naming the kind or the head and the sizes.
    """
    input_dims = (recorded_arguments(fusion) or {}).get("input_dims")
    if input_dims is not None:
        check_fusion_inputs(fused, input_dims, type(fusion).__name__)
    for task, head in heads.items():
        input_dim = (recorded_arguments(head) or {}).get("input_dim")
        if input_dim is not None and input_dim != fusion.output_dim:
            raise ValueError(
                f"head {task!r} takes {input_dim}-d embeddings (input_dim) but the fusion gives {fusion.output_dim} "
                "(its output_dim); build the head with input_dim=fusion.output_dim"
            )


def check_fusion_inputs(fused: Mapping[str, int], input_dims: Mapping[str, int], name: str) -> None:
    """Refuse the ``input_dims`` a fusion (of class ``name``) was built with unless they are ``fused``.

    Raises:
        ValueError: Naming the first kind that differs and the sizes.
    """
    for kind in sorted(set(fused) | set(input_dims)):
        if kind not in input_dims:
            raise ValueError(
                f"element kind {kind!r} is fused but the fusion ({name}) takes no input for it (input_dims: "
                f"{dict(input_dims)}); build it with input_dims[{kind!r}]={fused[kind]}, or leave the kind out of "
                "fused_kinds"
            )
        if kind not in fused:
            raise ValueError(
                f"the fusion ({name}) takes element kind {kind!r}, which the model does not fuse (fused kinds: "
                f"{', '.join(fused)}); build it for the fused kinds alone"
            )
        if input_dims[kind] != fused[kind]:
            raise ValueError(
                f"element kind {kind!r}: its encoder gives {fused[kind]}-d embeddings but the fusion ({name}) takes "
                f"{input_dims[kind]} (input_dims[{kind!r}]); build the fusion with each encoder's output_dim"
            )
