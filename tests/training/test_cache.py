"""The embedding cache's keys: what makes one encoder's embeddings of a kind comparable."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors
import torch
from PIL import Image

from faim import Detector, WholePostModel, registry
from faim.data import images
from faim.data.post import Post, as_posts
from faim.data.targets import TaskSpec
from faim.encoder import Encoder, Preprocessor
from faim.encoders import text_normalize
from faim.encoders.ngram_text import NgramTextEncoder
from faim.encoders.stack import StackedEncoder
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.encoders.tiny_use import TinyUseEncoder
from faim.fusion import ConcatFusion
from faim.notices import FaimWarning
from faim.preprocess.confusables import ConfusableFolder
from faim.tasks import BinaryHead
from faim.training import cache
from faim.training.cache import cache_key, cached_embeddings, part_description, part_identity, stamp_digests


class ScaledEncoder(Encoder):
    """A frozen text encoder whose embedding of a text is its length times ``scale``; it keeps ``identity``'s
    default (its class name), as a plug-in may."""

    modality = "text"

    def __init__(self, scale: float = 1.0, table: Path | None = None) -> None:
        super().__init__()
        self.scale = scale
        self.output_dim = 1
        self.apply_freeze(True)

    def preprocessor(self) -> Preprocessor:
        return lambda texts: torch.tensor([[float(len(text))] for text in texts])

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs * self.scale


@pytest.fixture
def scaled() -> Iterator[type[ScaledEncoder]]:
    """``ScaledEncoder`` registered as a plug-in encoder, as its own class; removed afterwards."""

    @registry.register_encoder("test_scaled")
    class Scaled(ScaledEncoder):
        pass

    yield Scaled
    registry.ENCODERS.pop("test_scaled")


def test_a_plugin_encoders_constructor_arguments_key_its_embeddings(scaled: type[ScaledEncoder]) -> None:
    assert part_identity(scaled(scale=2.0), "text", 4) != part_identity(scaled(scale=1.0), "text", 4)
    assert part_identity(scaled(scale=2.0), "text", 4) == part_identity(scaled(2.0), "text", 4)
    assert part_identity(scaled(), "text", 4) == part_identity(scaled(scale=1.0), "text", 4)  # defaults filled in


def test_a_path_argument_keys_the_embeddings_by_the_path_it_names(scaled: type[ScaledEncoder]) -> None:
    assert part_identity(scaled(table=Path("a.bin")), "text", 4) == part_identity(
        scaled(table=Path("a.bin")), "text", 4
    )
    assert part_identity(scaled(table=Path("a.bin")), "text", 4) != part_identity(
        scaled(table=Path("b.bin")), "text", 4
    )


def test_an_unregistered_encoder_is_keyed_by_its_identity() -> None:
    class Described(ScaledEncoder):
        def identity(self) -> dict[str, Any]:
            return super().identity() | {"scale": self.scale}

    assert part_identity(ScaledEncoder(scale=2.0), "text", 4) == part_identity(ScaledEncoder(scale=1.0), "text", 4)
    assert part_identity(Described(scale=2.0), "text", 4) != part_identity(Described(scale=1.0), "text", 4)


def test_folding_homoglyphs_changes_the_tiny_use_encoders_key() -> None:
    def identity(**arguments: Any) -> str:
        torch.manual_seed(0)  # the same random weights: only the argument differs
        return part_identity(TinyUseEncoder(freeze=True, **arguments), "text", 4)

    assert identity(fold_confusables=True) != identity(fold_confusables=False)
    assert identity(fold_confusables=True) == identity(fold_confusables=True)


@pytest.mark.parametrize("encoder", [TinyUseEncoder, TinyTextEncoder, NgramTextEncoder])
def test_an_encoder_folding_homoglyphs_is_keyed_by_the_folding_tables(encoder: type, monkeypatch) -> None:
    def identity() -> dict[str, Any]:
        torch.manual_seed(0)
        return encoder(fold_confusables=True).identity()

    shipped = identity()
    other = ConfusableFolder({"\u0430": "a"}, [(65, 90), (97, 122)])  # tables of another release
    monkeypatch.setattr(text_normalize, "confusable_folder", lambda: other)
    assert identity() != shipped


def test_a_stack_in_a_stack_is_keyed_by_its_members_arguments(scaled: type[ScaledEncoder]) -> None:
    def identity(scale: float) -> str:
        inner = StackedEncoder([scaled(scale=scale), scaled()])
        return part_identity(StackedEncoder([inner, scaled()]), "text", 4)

    assert identity(2.0) != identity(1.0)
    assert identity(2.0) == identity(2.0)


def test_a_picture_decoded_by_another_version_is_keyed_apart(tmp_path: Path, monkeypatch) -> None:
    picture = tmp_path / "grey.png"
    Image.new("L", (4, 4), 9).save(picture)
    posts = as_posts([{"id": "a", "images": [str(picture)]}, {"id": "b", "images": [picture.read_bytes()]}])
    now = cache_key("identity", "image", posts, 4), stamp_digests(posts, "image", 4)
    monkeypatch.setattr(cache, "IMAGE_DECODING", images.IMAGE_DECODING - 1)
    before = cache_key("identity", "image", posts, 4), stamp_digests(posts, "image", 4)
    assert now[0] != before[0]
    assert not set(now[1]) & set(before[1])  # neither a file's nor another list's rows are taken


def test_embeddings_cached_of_a_16_bit_picture_read_as_white_are_computed_anew(tmp_path: Path, monkeypatch) -> None:
    picture = tmp_path / "grey16.png"
    Image.fromarray((np.arange(32 * 32).reshape(32, 32) * 60).astype(np.uint16)).save(picture)
    torch.manual_seed(0)
    image = TinyImageEncoder(dim=8, freeze=True)
    model = WholePostModel({"image": image}, ConcatFusion({"image": 8}), {"t": BinaryHead(8)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": "a", "images": [str(picture)]}])
    with monkeypatch.context() as before:  # a faim whose decoding clipped the samples at 255
        before.setattr(images, "_eight_bit", lambda picture: picture)
        before.setattr(cache, "IMAGE_DECODING", images.IMAGE_DECODING - 1)
        white = cached_embeddings(model, collator, posts, tmp_path / "cache").tensors["image.values"]
    read = cached_embeddings(model, collator, posts, tmp_path / "cache")
    fresh = cached_embeddings(model, collator, posts, tmp_path / "fresh").tensors["image.values"]
    assert read.encoded == 1
    assert torch.equal(read.tensors["image.values"], fresh)
    assert not torch.equal(fresh, white)


def stored_descriptions(folder: Path) -> list[str]:
    """The ``description`` each file of a cache folder records in its metadata, in file name order."""
    descriptions = []
    for path in sorted(folder.glob("*.safetensors")):
        with safetensors.safe_open(str(path), framework="np") as stored:
            descriptions.append(stored.metadata()["description"])
    return descriptions


def test_a_cached_file_records_its_encoders_name_and_arguments_for_people(
    scaled: type[ScaledEncoder], tmp_path: Path
) -> None:
    stack = StackedEncoder([scaled(scale=2.0), ScaledEncoder()])
    model = WholePostModel({"text": stack}, ConcatFusion({"text": 2}), {"t": BinaryHead(2)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    cached_embeddings(model, collator, as_posts([{"id": "a", "text": "hello"}]), tmp_path)
    assert sorted(stored_descriptions(tmp_path)) == [
        f"text: ScaledEncoder(), max_elements={collator.max_elements}",
        f"text: test_scaled(scale=2.0, table=None), max_elements={collator.max_elements}",
    ]
    assert (
        part_description(stack, "text", 4)
        == "text: stack[test_scaled(scale=2.0, table=None), ScaledEncoder()], max_elements=4"
    )


def test_reading_cached_embeddings_marks_their_files_used_now(scaled: type[ScaledEncoder], tmp_path: Path) -> None:
    model = WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": str(n), "text": "x" * n} for n in range(3)])
    cached_embeddings(model, collator, posts, tmp_path)
    (written,) = tmp_path.glob("*.safetensors")
    long_ago = 946684800  # 2000-01-01
    os.utime(written, (long_ago, long_ago))
    assert cached_embeddings(model, collator, posts, tmp_path).encoded == 0  # the file itself read
    assert written.stat().st_mtime > long_ago
    os.utime(written, (long_ago, long_ago))
    assert cached_embeddings(model, collator, posts[:2], tmp_path).encoded == 0  # its rows taken for other posts
    assert written.stat().st_mtime > long_ago


def test_a_cache_file_removed_before_it_is_read_is_encoded_again_and_one_that_cannot_be_marked_is_read(
    scaled: type[ScaledEncoder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": str(n), "text": "x" * n} for n in range(3)])
    first = cached_embeddings(model, collator, posts, tmp_path)
    load_file = safetensors.torch.load_file

    def pruned_meanwhile(path: str) -> dict:
        Path(path).unlink()  # as a prune between finding the file and reading it
        return load_file(path)

    monkeypatch.setattr(safetensors.torch, "load_file", pruned_meanwhile)
    again = cached_embeddings(model, collator, posts, tmp_path)
    assert again.encoded == 3 and torch.equal(again.tensors["text.values"], first.tensors["text.values"])
    monkeypatch.setattr(safetensors.torch, "load_file", load_file)

    def read_only(*args, **kwargs) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "utime", read_only)
    assert cached_embeddings(model, collator, posts, tmp_path).encoded == 0


def file_contents(path: Path, data: bytes | None = None) -> tuple[dict[str, str], dict[str, list]]:
    """A safetensors file's metadata and tensors (as lists), written first from ``data`` where given: what a file
    holds, which two saves of the same tensors give alike though the order of their metadata's keys differs."""
    if data is not None:
        path.write_bytes(data)
    with safetensors.safe_open(path, framework="pt") as file:
        return file.metadata(), {key: file.get_tensor(key).tolist() for key in file.keys()}  # noqa: SIM118


def test_a_cache_file_that_cannot_be_read_is_warned_of_and_its_posts_encoded_again(
    scaled: type[ScaledEncoder], tmp_path: Path
) -> None:
    model = WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": str(n), "text": "x" * n} for n in range(3)])
    first = cached_embeddings(model, collator, posts, tmp_path)
    (written,) = tmp_path.glob("*.safetensors")
    whole = written.read_bytes()
    written.write_bytes(whole[:-4])  # its data cut short
    with pytest.warns(FaimWarning, match=f"embedding cache file {written} cannot be read") as warned:
        again = cached_embeddings(model, collator, posts, tmp_path)
    assert len(warned) == 1
    assert again.encoded == 3 and torch.equal(again.tensors["text.values"], first.tensors["text.values"])
    assert file_contents(written) == file_contents(tmp_path / "whole", whole)  # written anew
    other = tmp_path / f"{'0' * 32}.safetensors"
    other.write_bytes(whole[:-4])  # another file of the encoder, found when a list of posts of no file is read
    with pytest.warns(FaimWarning, match=f"embedding cache file {other} cannot be read"):
        assert cached_embeddings(model, collator, posts[:2], tmp_path).encoded == 0  # the whole file's rows


def test_a_damaged_cache_file_is_warned_of_only_where_this_encoder_would_read_it(
    scaled: type[ScaledEncoder], tmp_path: Path
) -> None:
    collator = Detector(
        WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)}),
        [TaskSpec("t", "binary", ("no", "yes"))],
    ).collator()

    def embed(scale: float, posts: list[Post]) -> int:
        model = WholePostModel({"text": scaled(scale=scale)}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
        return cached_embeddings(model, collator, posts, tmp_path).encoded

    posts = as_posts([{"id": str(n), "text": "x" * n} for n in range(6)])
    embed(1.0, posts[:3])
    (damaged,) = tmp_path.glob("*.safetensors")
    cut = damaged.read_bytes()[:-4]
    damaged.write_bytes(cut)  # its data cut short, its header whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert embed(2.0, posts) == 6  # another encoder's file: passed over
        assert embed(1.0, posts[3:]) == 3  # a file of the encoder holding none of the posts: passed over
    assert damaged.read_bytes() == cut  # left for faim cache prune
    with pytest.warns(FaimWarning, match=f"{damaged} cannot be read .*left as it is .*faim cache prune removes it"):
        assert embed(1.0, posts[1:4]) == 2  # its rows wanted: encoded again
    assert damaged.read_bytes() == cut


def test_a_damaged_cache_file_met_by_two_splits_is_warned_of_once_and_written_anew(
    scaled: type[ScaledEncoder], tmp_path: Path
) -> None:
    model = WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": str(n), "text": "x" * n} for n in range(5)])
    cached_embeddings(model, collator, posts[2:], tmp_path)  # the validation split
    (damaged,) = tmp_path.glob("*.safetensors")
    whole = damaged.read_bytes()
    damaged.write_bytes(whole[:-4])
    with pytest.warns(FaimWarning, match=f"embedding cache file {damaged} cannot be read") as warned:
        assert cached_embeddings(model, collator, posts, tmp_path).encoded == 5  # the whole data set
        assert cached_embeddings(model, collator, posts[2:], tmp_path).encoded == 0  # its rows in the whole set's
    assert len(warned) == 1
    assert file_contents(damaged) == file_contents(tmp_path / "whole", whole)  # written anew


@pytest.mark.parametrize("digests", [None, "not json", '{"a": 1}'])
def test_a_cache_file_recording_no_digests_as_an_older_faim_wrote_it_is_not_reused(
    digests: str | None, scaled: type[ScaledEncoder], tmp_path: Path
) -> None:
    model = WholePostModel({"text": scaled()}, ConcatFusion({"text": 1}), {"t": BinaryHead(1)})
    collator = Detector(model, [TaskSpec("t", "binary", ("no", "yes"))]).collator()
    posts = as_posts([{"id": str(n), "text": "x" * (n + 1)} for n in range(3)])
    first = cached_embeddings(model, collator, posts, tmp_path)
    (written,) = tmp_path.glob("*.safetensors")
    with safetensors.safe_open(str(written), framework="pt") as stored:
        metadata, tensors = stored.metadata(), {key: stored.get_tensor(key) for key in stored.keys()}
    metadata.pop("digests")
    if digests is not None:
        metadata["digests"] = digests
    safetensors.torch.save_file(tensors, str(written), metadata=metadata)
    again = cached_embeddings(model, collator, posts[:2], tmp_path)  # another list of posts: found by the digests
    assert again.encoded == 2 and torch.equal(again.tensors["text.values"], first.tensors["text.values"][:2])
