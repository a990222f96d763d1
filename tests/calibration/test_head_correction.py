"""A binary head corrected on a platform's labels: what the embedding tells beyond the head's own order, scored
honestly on the posts it was fitted on."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.metrics import roc_auc_score

from faim.calibration.head_correction import fit_head_correction


def platform(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Embeddings ``[n, 32]``, the head's logits (what another dataset's labels taught it: the first direction) and
    this platform's labels, which follow a second direction the head ignores."""
    rng = np.random.default_rng(seed)
    embeddings = rng.normal(size=(n, 32))
    head = 2.0 * embeddings[:, 0]
    labels = (rng.random(n) < expit(2.0 * embeddings[:, 1])).astype(np.int64)
    return embeddings, head, labels


def test_the_correction_reads_what_the_platforms_labels_follow_and_its_cross_fitted_logits_are_honest() -> None:
    embeddings, head, y = platform(300, seed=0)
    correction, held_out = fit_head_correction(embeddings, head, y)
    fresh_embeddings, fresh_head, fresh_y = platform(3000, seed=1)
    fresh = correction.logits(fresh_embeddings, fresh_head)
    assert roc_auc_score(fresh_y, fresh_head) == pytest.approx(0.5, abs=0.03)  # the head ranks these labels by chance
    assert roc_auc_score(fresh_y, fresh) > 0.8
    assert abs(correction.weight[1]) > 3 * abs(correction.weight[2:]).max()  # the direction the labels follow
    # scored by the regression fitted without them, the posts rank no better than fresh posts (a little worse: each
    # fold's regression saw four fifths of them); scored by the one fitted on them, better than they should
    held_out_auroc, in_sample_auroc = roc_auc_score(y, held_out), roc_auc_score(y, correction.logits(embeddings, head))
    assert 0.7 < held_out_auroc < roc_auc_score(fresh_y, fresh) < in_sample_auroc


def test_the_head_s_own_logit_keeps_its_weight_where_the_labels_follow_it() -> None:
    rng = np.random.default_rng(2)
    embeddings = rng.normal(size=(400, 8))
    head = 3.0 * embeddings[:, 0]
    y = (rng.random(400) < expit(head)).astype(np.int64)
    correction, _ = fit_head_correction(embeddings, head, y)
    assert correction.scale > 0.3 and correction.logits(embeddings, head).shape == (400,)


@pytest.mark.parametrize(("y", "message"), [(np.zeros(10), "both classes"), (np.array([0, 1, 0, 1]), "5 labelled")])
def test_a_correction_needs_both_classes_and_a_post_per_fold(y: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_head_correction(np.zeros((len(y), 3)), np.zeros(len(y)), y)
