"""Frozen-encoder embedding cache: encode every element of a split once, reuse it across runs.

One file per element kind and encoder, so models sharing an encoder share its embeddings (a text-only ablation
reuses the text embeddings of the multimodal model; encoders stacked on one kind are cached one by one, so a stack
that changes one member recomputes that member only). A file's key covers the kind, its encoder's identity (class,
weights and their sha256, preprocessing, the arguments a registered encoder was built with), the element cap, and a
fingerprint of what that encoder reads from the posts (texts, comments or metadata; image paths with size and
mtime, and the version of picture decoding), so a change to any of them computes that kind anew, and a change to
another kind's inputs does not. Files are written atomically (safe with several DDP processes).

Each file also records, in its metadata, its encoder's identity, that identity described for people to read (the
kind, the encoder's name and arguments), and a digest of what each post gave it. A list of
posts with no file of its own takes the rows of posts it shares with other files of the same encoder (a dataset
concatenated with another, a split read whole, posts added to a dump) and encodes only the rest.

Encoding stores what it has computed every ``CHUNK_SECONDS`` as a chunk of the file it makes
(``<key>.part-<digest>.safetensors``, written atomically, with the same metadata), so a run interrupted or crashing
part way loses at most that much: the next run takes the chunks' rows as it takes any other file's, encodes only
the rest, and removes the chunks once the split's file is written whole. A finished cache is one file per part, as
before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Any

import safetensors.torch
import torch
from torch import nn
from tqdm.auto import tqdm

from faim.data.batch import Elements
from faim.data.collate import PostCollator
from faim.data.elements import element_refs
from faim.data.images import IMAGE_DECODING
from faim.data.post import ImageRef, Post
from faim.encoders.stack import StackedEncoder, encoder_parts
from faim.model import WholePostModel
from faim.notices import warn
from faim.registry import recorded_arguments
from faim.training.cache_entries import read_safetensors_header
from faim.training.workers import post_loader

CHUNK_SECONDS = 30.0
"""How much encoding an interruption may lose: encoding a part stores a chunk of what it computed this often."""


def image_identity(post: Post, ref: ImageRef) -> str:
    """The resolved path of an image reference, or the sha256 of encoded image bytes."""
    if isinstance(ref, bytes):
        return hashlib.sha256(ref).hexdigest()
    return str(Path(ref) if post.image_root is None else post.image_root / ref)


def image_stamp(post: Post, ref: ImageRef) -> str:
    """A picture's identity (``image_identity``) with its file's size and modification time, or ``missing``; a
    picture there with the version of the decoding that makes its pixels (``faim.data.images.IMAGE_DECODING``), so
    its embeddings cached by a faim that decoded it otherwise are not read."""
    identity = image_identity(post, ref)
    decoding = f"decoding-{IMAGE_DECODING}"
    if isinstance(ref, bytes):
        return f"{identity}:{decoding}"
    path = Path(identity)
    if not path.exists():
        return f"{identity}:missing"
    stat = path.stat()
    return f"{identity}:{stat.st_size}:{stat.st_mtime_ns}:{decoding}"


def kind_fingerprint(posts: list[Post], kind: str, limit: int) -> str:
    """sha256 over what the encoder of ``kind`` reads from each post, in order: its ``element_signature`` (the
    text, the comments or the metadata), for pictures each one's ``image_stamp``. Another kind's inputs do not
    count, so pictures put in place again (new modification times) leave the text embeddings cached."""
    digest = hashlib.sha256()
    for post in posts:
        digest.update(element_stamp(post, kind, limit).encode() + b"\n")
    return digest.hexdigest()


def element_signature(post: Post, kind: str, limit: int) -> str:
    """What a post's elements of ``kind`` are made of: posts with equal signatures get equal embeddings."""
    refs = element_refs(post, kind, limit)
    return json.dumps([image_identity(post, ref) for ref in refs] if kind == "image" else refs)


def element_stamp(post: Post, kind: str, limit: int) -> str:
    """What a post gives the encoder of ``kind``, as ``kind_fingerprint`` reads it: pictures with their files' size
    and modification time, other kinds as their ``element_signature``."""
    if kind == "image":
        return json.dumps([image_stamp(post, ref) for ref in element_refs(post, kind, limit)])
    return element_signature(post, kind, limit)


def weights_digest(encoder: nn.Module) -> str:
    """sha256 of every parameter and buffer of ``encoder`` (name, dtype, shape and values): what it computes with,
    wherever its weights were read from. An encoder built from bundled weights and the same encoder loaded from a
    saved model share it; other weights saved under the same path do not."""
    digest = hashlib.sha256()
    for name, tensor in sorted(encoder.state_dict().items()):
        digest.update(f"{name} {tensor.dtype} {tuple(tensor.shape)}\n".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def part_identity(encoder: nn.Module, kind: str, max_elements: int) -> str:
    """sha256 of what makes one encoder's embeddings of a kind comparable: the kind, the encoder's identity (its
    preprocessing and settings), the arguments it was built with (``encoder_arguments``), its ``weights_digest`` and
    the element cap."""
    identity = {
        "kind": kind,
        "encoder": encoder.identity(),
        "arguments": encoder_arguments(encoder),
        "weights": weights_digest(encoder),
        "max_elements": max_elements,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=argument_text).encode()).hexdigest()


def part_description(encoder: nn.Module, kind: str, max_elements: int) -> str:
    """What ``part_identity`` digests, on one line for people to read (a cache listing names its files so): the
    kind, the encoder (``encoder_text``) and the element cap; the weights' digest is left out.
    ``text: tiny_text(dim=8, pooling='mean', freeze=True), max_elements=8``."""
    return f"{kind}: {encoder_text(encoder)}, max_elements={max_elements}"


def encoder_text(encoder: nn.Module) -> str:
    """A registered encoder as its recipe ``type`` and the arguments it was built with (``encoder_arguments``), an
    unregistered one as its class and what its ``identity`` says besides, a stack as ``stack[...]`` of its
    members'."""
    if isinstance(encoder, StackedEncoder):
        return f"stack[{', '.join(encoder_text(member) for member in encoder.members)}]"
    arguments = encoder_arguments(encoder)
    if arguments is None:
        identity = dict(encoder.identity())
        name, arguments = identity.pop("class", type(encoder).__name__), identity
    else:
        name = type(encoder).__dict__["registry_name"]
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def encoder_arguments(encoder: nn.Module) -> dict[str, Any] | list[Any] | None:
    """The arguments a registered ``encoder`` was built with, but its ``asset_arguments``; for a stack, each
    member's; ``None`` for an encoder whose class is not registered, which its ``identity`` alone describes."""
    if isinstance(encoder, StackedEncoder):
        return [encoder_arguments(member) for member in encoder.members]
    arguments = recorded_arguments(encoder)
    if arguments is None:
        return None
    return {name: value for name, value in arguments.items() if name not in getattr(encoder, "asset_arguments", ())}


def argument_text(value: Any) -> Any:
    """An argument JSON cannot write, as the cache key takes it: a path as the path it names, a set as its members
    in order, anything else as its ``repr`` (an object whose ``repr`` tells instances apart by address, as
    ``object``'s does, keys embeddings computed anew on every run)."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def cache_key(identity: str, kind: str, posts: list[Post], max_elements: int) -> str:
    """The file name stem of one encoder's embeddings of a kind's elements of ``posts``: its ``part_identity``
    and the ``kind_fingerprint`` of the posts."""
    fingerprint = kind_fingerprint(posts, kind, max_elements)
    return hashlib.sha256((identity + fingerprint).encode()).hexdigest()[:32]


def stamp_digests(posts: list[Post], kind: str, limit: int) -> list[str]:
    """A short digest of each post's ``element_stamp``: posts with equal digests get equal rows."""
    return [hashlib.sha256(element_stamp(post, kind, limit).encode()).hexdigest()[:20] for post in posts]


def rows_of(tensors: dict[str, torch.Tensor], kind: str, index: int, offsets: torch.Tensor) -> torch.Tensor:
    """The embedding rows of the post at ``index`` of a cached part."""
    start = int(offsets[index])
    return tensors[f"{kind}.values"][start : start + int(tensors[f"{kind}.counts"][index])]


def reuse_and_compute(
    kind: str,
    encoder: nn.Module,
    identity: str,
    description: str,
    collator: PostCollator,
    posts: list[Post],
    path: Path,
    batch_size: int,
    num_workers: int,
    label: str,
) -> tuple[dict[str, torch.Tensor], list[int]]:
    """One part's tensors for ``posts``, stored to ``path``: the rows other files of the same encoder hold for the
    same elements (chunks an interrupted run stored included), and the rest encoded now (nothing at all when every
    post is found), with the indices of the posts encoded now; ``identity`` and ``description`` are the encoder's
    ``part_identity`` and ``part_description``. The posts encoded now are stored in chunks beside ``path`` as they
    are (``CHUNK_SECONDS``), removed once ``path`` is written whole; the files read are marked used (``read_part``).
    Only the files of this encoder that record some of the posts are read: another encoder's file, and one whose
    header cannot be read, are passed over unopened and unwarned of (``faim cache list`` counts them)."""
    limit = collator.max_elements
    digests = stamp_digests(posts, kind, limit)
    wanted = set(digests)
    found: dict[str, torch.Tensor] = {}
    folder = path.parent
    for other in sorted(folder.glob("*.safetensors")) if folder.is_dir() else []:
        if not wanted.difference(found):
            break
        if other == path:  # the part's own file, found missing or damaged already
            continue
        known = recorded_digests(other, identity)
        if known is None or not wanted.intersection(known):
            continue
        tensors = read_part(other, REUSED_FILE_FATE)
        if tensors is None:  # removed meanwhile (a chunk made whole), or damaged: its rows are encoded
            continue
        offsets = torch.cumsum(tensors[f"{kind}.counts"], 0) - tensors[f"{kind}.counts"]
        for index, digest in enumerate(known):
            if digest in wanted and digest not in found:
                found[digest] = rows_of(tensors, kind, index, offsets)
    missing = [index for index, digest in enumerate(digests) if digest not in found]
    if missing:

        def keep(chunk: list[Post], tensors: dict[str, torch.Tensor]) -> None:
            chunk_digests = stamp_digests(chunk, kind, limit)
            name = hashlib.sha256(json.dumps(chunk_digests).encode()).hexdigest()[:16]
            chunk_path = path.with_name(f"{path.stem}.part-{name}{path.suffix}")
            save_part(tensors, chunk_path, identity, description, chunk_digests)

        (computed,) = compute_embeddings(
            [(kind, encoder)], collator, [posts[i] for i in missing], batch_size, num_workers, label, keep
        )
        offsets = torch.cumsum(computed[f"{kind}.counts"], 0) - computed[f"{kind}.counts"]
        for n, index in enumerate(missing):
            found.setdefault(digests[index], rows_of(computed, kind, n, offsets))
    rows = [found[digest] for digest in digests]
    dim = next((r.shape[-1] for r in rows if r.shape[0]), encoder.output_dim)
    tensors = {
        f"{kind}.values": torch.cat(rows) if rows else torch.zeros(0, dim),
        f"{kind}.counts": torch.tensor([r.shape[0] for r in rows], dtype=torch.long),
    }
    save_part(tensors, path, identity, description, digests)
    for chunk in folder.glob(f"{path.stem}.part-*{path.suffix}"):
        chunk.unlink(missing_ok=True)
    return tensors, missing


class EmbeddingCache:
    """Per-kind element embeddings of a list of posts: ``values [M, d]`` and ``counts [N]`` per kind; ``encoded``:
    how many of the posts some frozen encoder encoded when the cache was read (0 when every embedding was found
    stored)."""

    def __init__(self, tensors: dict[str, torch.Tensor], encoded: int) -> None:
        self.tensors = tensors
        self.encoded = encoded
        self.kinds = sorted({name.split(".")[0] for name in tensors})
        self.offsets = {k: torch.cumsum(tensors[f"{k}.counts"], 0) - tensors[f"{k}.counts"] for k in self.kinds}

    def elements(self, indices: list[int]) -> dict[str, Elements]:
        """Encoded ``Elements`` for the posts at ``indices`` (in that order)."""
        out = {}
        for kind in self.kinds:
            counts = self.tensors[f"{kind}.counts"][indices]
            starts = self.offsets[kind][indices]
            rows = [torch.arange(s, s + c) for s, c in zip(starts.tolist(), counts.tolist())]
            flat = torch.cat(rows) if rows else torch.zeros(0, dtype=torch.long)
            post_index = torch.repeat_interleave(torch.arange(len(indices)), counts)
            slot_index = torch.cat([torch.arange(c) for c in counts.tolist()]) if rows else flat
            num_slots = int(counts.max()) if len(indices) else 0
            out[kind] = Elements(self.tensors[f"{kind}.values"][flat], post_index, slot_index, num_slots, encoded=True)
        return out


def compute_embeddings(
    parts: list[tuple[str, nn.Module]],
    collator: PostCollator,
    posts: list[Post],
    batch_size: int,
    num_workers: int,
    label: str,
    keep: Callable[[list[Post], dict[str, torch.Tensor]], None],
) -> list[dict[str, torch.Tensor]]:
    """Run each ``(kind, encoder)`` of ``parts`` over the elements of that kind of ``posts``; one dict of the tensors
    an ``EmbeddingCache`` holds (``<kind>.values``, ``<kind>.counts``) per part. Every ``CHUNK_SECONDS``, ``keep``
    is given the distinct posts encoded since it was last given any, with their tensors.

    Posts whose elements of a kind are the same (one picture shared by many posts, a retweeted text) are encoded
    once and share the rows; only the elements of the parts' kinds are read and preprocessed, each with its own
    encoder's preprocessor.
    """
    computed = []
    with encoding_in_isolation([encoder for _, encoder in parts]):
        for kind, encoder in parts:
            tensors: dict[str, torch.Tensor] = {}
            signatures = [element_signature(post, kind, collator.max_elements) for post in posts]
            first_post: dict[str, int] = {}  # signature → index of the first post carrying it
            for index, signature in enumerate(signatures):
                first_post.setdefault(signature, index)
            number = {signature: n for n, signature in enumerate(first_post)}
            distinct = [number[signature] for signature in signatures]
            unique_posts = [posts[index] for index in first_post.values()]
            collate = collator.only([kind]).using(kind, encoder.preprocessor())
            loader = post_loader(unique_posts, collate, batch_size=batch_size, num_workers=num_workers)
            values, counts = [], []
            kept, kept_posts, kept_at = 0, 0, time.monotonic()  # the batches, posts given to keep, and when
            for batch in tqdm(loader, desc=f"embedding {label} ({kind})", unit="batch", leave=False):
                elements = batch.elements[kind]
                values.append(encoder(elements.values).float())
                counts.append(torch.bincount(elements.post_index, minlength=batch.size))
                if time.monotonic() - kept_at >= CHUNK_SECONDS:
                    chunk = {f"{kind}.values": torch.cat(values[kept:]), f"{kind}.counts": torch.cat(counts[kept:])}
                    posts_now = kept_posts + len(chunk[f"{kind}.counts"])
                    keep(unique_posts[kept_posts:posts_now], chunk)
                    kept, kept_posts, kept_at = len(values), posts_now, time.monotonic()
            unique_values, unique_counts = torch.cat(values), torch.cat(counts)
            starts = torch.cumsum(unique_counts, 0) - unique_counts
            post_counts = unique_counts[distinct]
            rows = [
                torch.arange(start, start + count)
                for start, count in zip(starts[distinct].tolist(), post_counts.tolist())
            ]
            tensors[f"{kind}.values"] = unique_values[torch.cat(rows)] if rows else unique_values
            tensors[f"{kind}.counts"] = post_counts
            computed.append(tensors)
    return computed


@contextmanager
def encoding_in_isolation(encoders: list[nn.Module]) -> Iterator[None]:
    """Run the block with ``encoders`` in eval mode, without gradients and on a forked random state; afterwards
    every module's train/eval mode and torch's random state are as they were. So a run that embeds its posts for
    the cache trains exactly as a run that reads them from it: same dropout, same shuffling."""
    modes = {module: module.training for encoder in encoders for module in encoder.modules()}
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            for encoder in encoders:
                encoder.eval()
            yield
    finally:
        for module, training in modes.items():
            module.training = training


def cached_embeddings(
    model: WholePostModel,
    collator: PostCollator,
    posts: list[Post],
    cache_dir: str | Path,
    batch_size: int = 64,
    num_workers: int = 0,
    label: str = "posts",
    kinds: list[str] | None = None,
) -> EmbeddingCache:
    """Load the split's embeddings of ``kinds`` (``None``: every kind) from ``cache_dir``, computing and
    storing those missing there; a stack's members are read, computed and stored one by one and side by side. The
    cache counts the posts encoded now (``EmbeddingCache.encoded``). The chunks an interrupted run stored of a
    file are read instead of encoding their posts again, and removed once the file is written."""
    folder = Path(cache_dir).expanduser()
    parts = {}
    for kind in model.kinds if kinds is None else kinds:
        for index, encoder in enumerate(encoder_parts(model.encoder_for(kind))):
            identity = part_identity(encoder, kind, collator.max_elements)
            key = cache_key(identity, kind, posts, collator.max_elements)
            description = part_description(encoder, kind, collator.max_elements)
            parts[kind, index] = (encoder, identity, description, folder / f"{key}.safetensors")
    stored = {
        part: tensors for part, (*_, path) in parts.items() if (tensors := read_part(path, OWN_FILE_FATE)) is not None
    }
    encoded: set[int] = set()
    for part in [part for part in parts if part not in stored]:
        kind = part[0]
        encoder, identity, description, path = parts[part]
        tensors, missing = reuse_and_compute(
            kind, encoder, identity, description, collator, posts, path, batch_size, num_workers, label
        )
        encoded.update(missing)
        stored[part] = tensors
    tensors: dict[str, torch.Tensor] = {}
    for kind in dict.fromkeys(kind for kind, _ in parts):
        pieces = [stored[kind, index] for index in range(len({i for k, i in parts if k == kind}))]
        tensors[f"{kind}.values"] = torch.cat([piece[f"{kind}.values"] for piece in pieces], dim=-1)
        tensors[f"{kind}.counts"] = pieces[0][f"{kind}.counts"]
    return EmbeddingCache(tensors, len(encoded))


def recorded_digests(path: Path, identity: str) -> list[str] | None:
    """The ``stamp_digests`` the cache file at ``path`` records, when it is a file of the encoder whose
    ``part_identity`` is ``identity``, read from its header alone (a file whose data is cut short is found, and
    ``read_part`` warns of it); ``None`` for another encoder's file and for one whose header cannot be read."""
    read = read_safetensors_header(path, follow_links=True)
    metadata = read[0].get("__metadata__") if read is not None else None
    if not isinstance(metadata, dict) or metadata.get("identity") != identity:
        return None
    try:
        digests = json.loads(metadata["digests"])
    except (LookupError, TypeError, ValueError):
        return None
    return digests if isinstance(digests, list) else None


OWN_FILE_FATE = "the file is written anew, its posts encoded again where no other file holds their rows"
"""What becomes of a split's own cache file that cannot be read, as ``warn_unreadable`` tells it."""

REUSED_FILE_FATE = (
    "the rows it held for the posts read now are encoded again where no other file holds them; the file is left as "
    "it is until a run over the posts it was made for writes it anew or faim cache prune removes it"
)
"""What becomes of another file of the same encoder that cannot be read, as ``warn_unreadable`` tells it."""


def read_part(path: Path, fate: str) -> dict[str, torch.Tensor] | None:
    """The tensors of a part (or a chunk) stored at ``path``; ``None`` where none is, never written or removed
    meanwhile (a chunk made whole, the cache pruned), and where the file there cannot be read (cut short or
    overwritten: warned of once, with its ``fate``, what becomes of it, by ``warn_unreadable``). Reading marks the
    file used now, as its modification time, so a prune of what was not used lately keeps it; a cache on a disk
    that cannot be written is read unmarked."""
    try:
        tensors = safetensors.torch.load_file(str(path))
    except FileNotFoundError:
        return None
    except safetensors.SafetensorError as error:
        warn_unreadable(path, error, fate)
        return None
    with contextlib.suppress(OSError):
        os.utime(path, follow_symlinks=os.utime not in os.supports_follow_symlinks)  # a link's own time
    return tensors


WARNED_UNREADABLE: set[tuple[Path, int, int]] = set()
"""The damaged cache files this process has warned of, each with its size and modification time, so one damaged
again after it was written anew is warned of again."""


def warn_unreadable(path: Path, error: Exception, fate: str) -> None:
    """Warn that the cache file at ``path`` cannot be read as safetensors (``error``) and what becomes of it
    (``fate``), once a process however many splits meet it (``WARNED_UNREADABLE``)."""
    try:
        found = path.stat()
    except OSError:  # removed since it was read: nothing left to warn of
        return
    seen = (path, found.st_size, found.st_mtime_ns)
    if seen in WARNED_UNREADABLE:
        return
    WARNED_UNREADABLE.add(seen)
    warn(f"embedding cache file {path} cannot be read ({error}): {fate}")


def save_part(
    tensors: dict[str, torch.Tensor], path: Path, identity: str, description: str, digests: list[str]
) -> None:
    """Write a part's (or a chunk's) tensors to ``path`` atomically, with its encoder's ``identity`` and the
    ``stamp_digests`` of its posts in the metadata, by which other lists of posts find their rows in it, and its
    ``part_description``, by which a listing of the cache names it."""
    metadata = {"identity": identity, "description": description, "digests": json.dumps(digests)}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        safetensors.torch.save_file({k: v.contiguous() for k, v in tensors.items()}, str(partial), metadata=metadata)
    except BaseException:  # stopped part way (Ctrl-C, a full disk): nothing reads a partial file, so none is left
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, path)
