"""The align fusion: CCA on the training pairs finds what caption and picture share, so their products tell
matched pairs from mismatched ones that neither side alone can."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from faim.fusion.align import AlignFusion
from faim.notices import FaimWarning


def paired(n: int, seed: int, shared: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """Text ``[n, 24]`` and image ``[n, 40]`` embeddings sharing ``shared`` latent factors, the rest noise."""
    generator = torch.Generator().manual_seed(seed)
    to_text, to_image = torch.randn(shared, 24, generator=generator), torch.randn(shared, 40, generator=generator)
    factors = torch.randn(n, shared, generator=generator)
    text = factors @ to_text + 2 * torch.randn(n, 24, generator=generator)
    image = factors @ to_image + 2 * torch.randn(n, 40, generator=generator)
    return text, image


def elements(text: torch.Tensor, image: torch.Tensor) -> dict:
    present = torch.ones(len(text), 1, dtype=torch.bool)
    return {"text": (text.unsqueeze(1), present), "image": (image.unsqueeze(1), present)}


def agreement_auroc(fusion: AlignFusion, text: torch.Tensor, image: torch.Tensor) -> float:
    """AUROC of the summed products (a cosine in the shared space) telling true pairs from shuffled ones."""
    shuffled = image[torch.randperm(len(image), generator=torch.Generator().manual_seed(1))]
    with torch.no_grad():
        scores = torch.cat([fusion(elements(text, image)), fusion(elements(text, shuffled))]).sum(1).numpy()
    return roc_auc_score(np.r_[np.ones(len(text)), np.zeros(len(text))], scores)


def test_fitting_on_the_training_pairs_finds_what_they_share() -> None:
    torch.manual_seed(0)
    fusion = AlignFusion({"text": 24, "image": 40}, dim=4, keep_kinds=False, dropout=0.0).eval()
    text, image = paired(900, seed=0)
    train, test = (text[:600], image[:600]), (text[600:], image[600:])
    unfitted = agreement_auroc(fusion, *test)
    fusion.fit([elements(train[0], torch.cat([train[1][:300], train[1][300:].roll(1, 0)]))])  # half mismatched
    assert agreement_auroc(fusion, *test) > 0.9 > 0.6 > unfitted


def test_posts_missing_a_kind_are_left_out_of_the_fit_and_fused_with_the_absent_vector() -> None:
    torch.manual_seed(0)
    fusion = AlignFusion({"text": 24, "image": 40}, dim=4, dropout=0.0).eval()
    text, image = paired(50, seed=2)
    batch = elements(text, image)
    batch["image"] = (batch["image"][0], batch["image"][1] & (torch.arange(50) % 2 == 0).unsqueeze(1))
    fusion.fit([batch])
    out = fusion(batch)
    assert out.shape == (50, 4 + 24 + 40) and torch.isfinite(out).all()


def test_pairs_must_name_two_kinds() -> None:
    with pytest.raises(ValueError, match=r"pair \['text', 'audio'\] must name two kinds"):
        AlignFusion({"text": 8, "image": 8}, pairs=[["text", "audio"]])
    with pytest.raises(ValueError, match="needs a pair of kinds"):
        AlignFusion({"text": 8})


def test_a_pair_too_few_training_posts_hold_both_of_is_warned_of_and_left_unfitted() -> None:
    torch.manual_seed(0)
    fusion = AlignFusion({"text": 24, "image": 40}, dim=4, dropout=0.0).eval()
    text, image = paired(50, seed=3)
    batch = elements(text, image)
    batch["image"] = (batch["image"][0], batch["image"][1] & (torch.arange(50) < 2).unsqueeze(1))
    before = [layer.weight.clone() for layer in fusion.projections[0]]
    with pytest.warns(FaimWarning, match=r"2 training posts hold both image and text, 3 needed") as caught:
        fusion.fit([batch])
    assert len(caught) == 1 and "keep their random initialisation" in str(caught[0].message)
    assert all(torch.equal(layer.weight, weight) for layer, weight in zip(fusion.projections[0], before))
    batch["image"] = (batch["image"][0], batch["image"][1] | (torch.arange(50) < 3).unsqueeze(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        fusion.fit([batch])
