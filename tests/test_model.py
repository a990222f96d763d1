"""WholePostModel composed in plain Python, with no recipe: scoring, embedding, masking, routes."""

from __future__ import annotations

import io

import pytest
import torch
from PIL import Image

import faim
from faim import Detector, WholePostModel, registry
from faim.artifact import read_recipe
from faim.data.post import as_posts
from faim.data.targets import TaskSpec
from faim.encoders.ngram_text import NgramTextEncoder
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import AttentionFusion, ConcatFusion
from faim.tasks import BinaryHead, MulticlassHead


@pytest.fixture
def detector() -> Detector:
    torch.manual_seed(0)
    text, image = TinyTextEncoder(dim=16), TinyImageEncoder(dim=8)
    fusion = AttentionFusion({"text": 16, "image": 8, "comments": 16}, dim=16, num_heads=2)
    model = WholePostModel(
        {"text": text, "image": image},
        fusion,
        {"hate": BinaryHead(16), "topic": MulticlassHead(16, num_classes=3)},
        routes={"comments": "text"},
    )
    tasks = [TaskSpec("hate", "binary", ("no", "yes")), TaskSpec("topic", "multiclass", ("a", "b", "c"))]
    return Detector(model, tasks)


def posts() -> list[dict]:
    red = Image.new("RGB", (20, 20), (255, 0, 0))
    buffer = io.BytesIO()
    red.save(buffer, format="PNG")
    return [
        {"id": "full", "text": "some text", "images": [buffer.getvalue()], "comments": ["c1", "c2"]},
        {"id": "text-only", "text": "just words"},
        {"id": "two-images", "images": [buffer.getvalue(), buffer.getvalue()]},
    ]


def test_composed_model_scores_any_mix_of_elements(detector: Detector) -> None:
    scores = detector.score(posts())
    assert [row["id"] for row in scores] == ["full", "text-only", "two-images"]
    for row in scores:
        assert 0.0 <= row["hate"] <= 1.0
        assert set(row["topic"]) == {"a", "b", "c"} and abs(sum(row["topic"].values()) - 1) < 1e-5


def test_embed_returns_one_vector_per_post(detector: Detector) -> None:
    embeddings = detector.embed(posts(), batch_size=3)
    assert embeddings.shape == (3, 16) and not (embeddings != embeddings).any()


def test_shared_encoder_is_stored_once(detector: Detector) -> None:
    names = [name for name, _ in detector.model.named_parameters()]
    assert not any(name.startswith("encoders.comments") for name in names)
    assert detector.model.encoder_for("comments") is detector.model.encoders["text"]


def test_dropping_a_kind_equals_a_post_without_it(detector: Detector) -> None:
    collate = detector.collator()
    full = collate(as_posts([posts()[0] | {"images": []}]))
    with_image = collate(as_posts([posts()[0]]))
    detector.model.eval()
    with torch.no_grad():
        assert torch.allclose(detector.model.embed(full), detector.model.embed(with_image, drop=["image"]), atol=1e-6)


def test_code_composed_model_is_saved_as_a_recipe_of_its_modules_and_loads_back(detector: Detector, tmp_path) -> None:
    detector.thresholds["hate"] = 0.3
    detector.save(tmp_path / "model")
    recipe = read_recipe(tmp_path / "model")
    assert recipe.data is None
    text = {"max_length": 32, "pooling": "mean", "freeze": False, "fold_confusables": False, "fold_leetspeak": False}
    assert recipe.model["encoders"] == {
        "text": {"type": "tiny_text", "dim": 16} | text,
        "image": {"type": "tiny_image", "dim": 8, "freeze": False},
        "comments": "text",
    }
    attention = {"type": "attention", "dim": 16, "num_heads": 2, "num_layers": 1, "dropout": 0.1, "max_elements": 64}
    assert recipe.model["fusion"] == attention
    assert recipe.model["heads"]["topic"] == {"type": "multiclass", "hidden_dim": 0, "dropout": 0.0,
                                              "class_weights": None, "label_smoothing": 0.0,
                                              "labels": ["a", "b", "c"]}  # fmt: skip
    loaded = faim.load(tmp_path / "model")
    assert loaded.score(posts()) == detector.score(posts())
    assert loaded.thresholds["hate"] == 0.3


def test_a_module_that_is_not_registered_cannot_be_written_out(detector: Detector, tmp_path) -> None:
    class Unregistered(BinaryHead):
        pass

    detector.model.heads["hate"] = Unregistered(16)
    with pytest.raises(ValueError, match="Unregistered is not a registered component"):
        detector.save(tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_wrong_modality_for_a_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="'image' needs a image encoder"):
        WholePostModel({"image": TinyTextEncoder()}, AttentionFusion({"image": 32}), {"x": BinaryHead(256)})


@pytest.mark.parametrize(
    ("fusion", "head", "message"),
    [
        (
            ConcatFusion({"text": 32}),
            32,
            r"element kind 'image' is fused but the fusion \(ConcatFusion\) takes no input for it \(input_dims: "
            r"\{'text': 32\}\); build it with input_dims\['image'\]=16, or leave the kind out of fused_kinds",
        ),
        (
            ConcatFusion({"text": 32, "image": 16, "comments": 32}),
            80,
            r"the fusion \(ConcatFusion\) takes element kind 'comments', which the model does not fuse \(fused kinds: "
            r"image, text\)",
        ),
        (
            ConcatFusion({"text": 64, "image": 16}),
            80,
            r"element kind 'text': its encoder gives 32-d embeddings but the fusion \(ConcatFusion\) takes 64 "
            r"\(input_dims\['text'\]\)",
        ),
        (
            ConcatFusion({"text": 32, "image": 16}),
            32,
            r"head 'hate' takes 32-d embeddings \(input_dim\) but the fusion gives 48 \(its output_dim\)",
        ),
    ],
    ids=["a fused kind missing", "a kind not fused", "another size", "a head of another size"],
)
def test_a_fusion_or_head_built_for_other_sizes_than_the_model_gives_it_is_refused_naming_them(
    fusion: ConcatFusion, head: int, message: str
) -> None:
    encoders = {"text": TinyTextEncoder(dim=32), "image": TinyImageEncoder(dim=16)}
    with pytest.raises(ValueError, match=message):
        WholePostModel(encoders, fusion, {"hate": BinaryHead(head)})


def test_unfused_kinds_are_embedded_on_request_but_never_reach_the_heads() -> None:
    torch.manual_seed(0)
    model = WholePostModel(
        {"text": TinyTextEncoder(dim=16), "image": TinyImageEncoder(dim=8)},
        AttentionFusion({"text": 16}, dim=16, num_heads=2),
        {"hate": BinaryHead(16)},
        fused_kinds=["text"],
    )
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    with_picture, without = posts()[0], dict(posts()[0], images=[])
    collate = detector.collator()
    scores = detector.score([with_picture, without])
    assert scores[0]["hate"] == scores[1]["hate"]
    embeddings, mask = model.encode(collate(as_posts([with_picture])), kinds=["image"])["image"]
    assert embeddings.shape == (1, 1, 8) and mask.all()


def test_fused_kinds_must_be_kinds_the_model_reads() -> None:
    with pytest.raises(ValueError, match="fused_kinds"):
        WholePostModel(
            {"text": TinyTextEncoder(dim=16)},
            AttentionFusion({"text": 16}, dim=16, num_heads=2),
            {"hate": BinaryHead(16)},
            fused_kinds=["image"],
        )


def test_an_encoder_failing_to_fit_for_another_reason_than_its_elements_raises_its_own_error_unnamed() -> None:
    @faim.register_encoder("test_failing_fit")
    class FailingFit(TinyTextEncoder):
        needs_fit = True

        def fit(self, elements: list) -> None:
            raise RuntimeError("CUDA out of memory")

    recipe = {
        "encoders": {"text": {"type": "test_failing_fit", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"hate": {"type": "binary", "labels": ["no", "yes"]}},
    }
    try:
        model = faim.build({"model": recipe}).model
    finally:
        registry.ENCODERS.pop("test_failing_fit")
    with pytest.raises(RuntimeError, match=r"^CUDA out of memory$") as raised:
        model.fit_encoders(as_posts([{"id": "a", "text": "a post"}]), max_elements=8)
    assert type(raised.value) is RuntimeError


def test_an_encoder_refusing_its_training_elements_is_named_by_its_recipe_path() -> None:
    model = WholePostModel(
        {"text": NgramTextEncoder(dim=4, char_ngrams=None)}, ConcatFusion({"text": 4}), {"hate": BinaryHead(4)}
    )
    with pytest.raises(ValueError, match=r"^model\.encoders\.text: ngram_text: word_ngrams \[1, 2\] found no n-gram"):
        model.fit_encoders(as_posts([{"id": str(i), "text": "🔥 😀"} for i in range(3)]), max_elements=8)


@pytest.mark.parametrize(
    ("task_type", "outputs", "shape"),
    [("binary", 1, r"\[3, 1\]"), ("multiclass", 0, r"\[3\]")],
    ids=["a binary head giving a column", "a multiclass head giving one logit a post"],
)
def test_a_head_whose_logits_have_another_shape_than_its_task_type_gives_is_named_when_it_runs(
    task_type: str, outputs: int, shape: str
) -> None:
    class OddHead(BinaryHead):
        def forward(self, embedding: torch.Tensor) -> torch.Tensor:
            logits = self.net(embedding)  # [B, 1], as faim.tasks.base.Head gives it
            return logits if outputs else logits.squeeze(-1)

    OddHead.task_type = task_type
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": OddHead(8)})
    detector = Detector(model, [TaskSpec("hate", task_type, ("no", "yes"))])
    expected = {"binary": r"\[B\]", "multiclass": r"\[B, num_classes\]"}[task_type]
    message = rf"^head 'hate' \(OddHead, {task_type}\) gave logits of shape {shape} for a batch of 3; a {task_type} "
    with pytest.raises(ValueError, match=message + rf"head's forward returns {expected}"):
        detector.score([{"text": "a"}, {"text": "b"}, {"text": "c"}])


def test_an_encoder_giving_embeddings_of_another_size_than_its_output_dim_is_named_when_it_runs() -> None:
    class WiderText(TinyTextEncoder):
        def forward(self, inputs: dict) -> torch.Tensor:
            embeddings = super().forward(inputs)
            return torch.cat([embeddings, embeddings[:, :1]], dim=-1)

    model = WholePostModel({"text": WiderText(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    message = (
        r"^element kind 'text': its encoder \(WiderText\) gave embeddings of shape \[2, 9\] for 2 elements; an "
        r"encoder's forward returns \[N, output_dim\], here \[2, 8\]$"
    )
    with pytest.raises(ValueError, match=message):
        detector.score([{"text": "a"}, {"text": "b"}])
    with pytest.raises(ValueError, match=r"shape \[1, 9\] for 1 element; an "):
        detector.score([{"text": "a"}])


def test_an_encoder_giving_embeddings_that_are_not_floating_point_is_named_when_it_runs() -> None:
    class RoundedText(TinyTextEncoder):
        def forward(self, inputs: dict) -> torch.Tensor:
            return (super().forward(inputs) * 10).long()  # no gradient reaches the encoder's weights

    model = WholePostModel({"text": RoundedText(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    message = (
        r"^element kind 'text': its encoder \(RoundedText\) gave embeddings of dtype torch.int64; an encoder's "
        r"forward returns floating-point embeddings, through which training reaches its weights$"
    )
    with pytest.raises(ValueError, match=message):
        detector.score([{"text": "a"}, {"text": "b"}])


def test_a_fusion_giving_float64_is_read_as_the_encoders_are_and_whole_numbers_refused() -> None:
    class DoubleFusion(ConcatFusion):  # a fusion computing in float64, as numpy does
        def forward(self, elements: dict) -> torch.Tensor:
            return super().forward(elements).double()

    torch.manual_seed(0)
    plain = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    double = WholePostModel({"text": TinyTextEncoder(dim=8)}, DoubleFusion({"text": 8}), {"hate": BinaryHead(8)})
    double.load_state_dict(plain.state_dict())
    tasks = [TaskSpec("hate", "binary", ("no", "yes"))]
    posts = [{"text": "a"}, {"text": "b"}]
    scores = [row["hate"] for row in Detector(double, tasks).score(posts)]
    assert scores == pytest.approx([row["hate"] for row in Detector(plain, tasks).score(posts)], abs=1e-6)

    class RoundingFusion(ConcatFusion):
        def forward(self, elements: dict) -> torch.Tensor:
            return super().forward(elements).long()

    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, RoundingFusion({"text": 8}), {"hate": BinaryHead(8)})
    message = (
        r"^the fusion \(RoundingFusion\) gave whole-post embeddings of dtype torch.int64; a fusion's forward "
        r"returns floating-point embeddings, through which training reaches its weights and the encoders'$"
    )
    with pytest.raises(ValueError, match=message):
        Detector(model, tasks).score(posts)


def test_a_fusion_giving_embeddings_of_another_size_than_its_output_dim_is_named_when_it_runs() -> None:
    class WiderFusion(ConcatFusion):
        def forward(self, elements: dict) -> torch.Tensor:
            embedding = super().forward(elements)
            return torch.cat([embedding, embedding[:, :1]], dim=-1)

    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, WiderFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    message = (
        r"^the fusion \(WiderFusion\) gave whole-post embeddings of shape \[2, 9\] for a batch of 2 posts; a fusion's "
        r"forward returns \[B, output_dim\], here \[2, 8\]$"
    )
    for call in (detector.score, detector.embed):
        with pytest.raises(ValueError, match=message):
            call([{"text": "a"}, {"text": "b"}])


def test_scoring_from_two_threads_overlapping_keeps_the_model_in_eval_mode_until_both_end(detector: Detector) -> None:
    from faim.model import evaluating

    model = detector.model.train()
    model.heads["hate"].eval()  # a part in eval mode of its own, as a frozen encoder is
    first, second = evaluating(model), evaluating(model)
    first.__enter__()
    second.__enter__()  # a second thread scores while the first does
    first.__exit__(None, None, None)
    assert not any(part.training for part in model.modules())  # the second still scores: no dropout on
    second.__exit__(None, None, None)
    assert model.training and not model.heads["hate"].training  # each part as it was before either scored


def test_blocks_overlapping_on_a_shared_part_keep_it_in_eval_mode_until_both_end() -> None:
    """Two models sharing one encoder, and one thread running a part while another runs the whole, overlap on the
    part: it stays in eval mode while either runs, and is set back as it was once the last ends."""
    from faim.model import EVALUATING, evaluating

    shared = TinyTextEncoder(dim=16)

    def built() -> WholePostModel:
        return WholePostModel({"text": shared}, ConcatFusion({"text": 16}), {"hate": BinaryHead(16)}).train()

    first, second = built(), built()
    for outer, inner in ((first, second), (shared, first)):
        blocks = evaluating(outer), evaluating(inner)
        blocks[0].__enter__()
        blocks[1].__enter__()
        blocks[0].__exit__(None, None, None)
        assert not any(part.training for part in inner.modules())  # the other still runs: no dropout on
        blocks[1].__exit__(None, None, None)
        assert all(part.training for part in (*first.modules(), *second.modules())) and not EVALUATING


def test_a_part_whose_hash_follows_its_state_changing_in_the_block_is_set_back_as_it_was() -> None:
    """A part hashed by its state (a torchmetrics Metric is) changes its hash as the block updates it: the block
    still sets it back, and leaves none of its parts counted."""
    from faim.model import EVALUATING, evaluating

    class Counted(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.seen = 0

        def __hash__(self) -> int:
            return hash(self.seen)

    model = torch.nn.Sequential(torch.nn.Dropout(), Counted()).train()
    with evaluating(model):
        model[1].seen += 1
    assert model.training and model[1].training and not EVALUATING


@pytest.mark.parametrize("kind", ["meta", "video"])
def test_posts_linked_by_a_kind_the_model_does_not_read_are_refused_naming_the_kinds_it_reads(
    kind: str, detector: Detector
) -> None:
    said = rf"^link_kind {kind!r}: not a kind the model reads \(comments, image, text\)$"
    with pytest.raises(ValueError, match=said):
        detector.predict(posts(), link_kind=kind)
