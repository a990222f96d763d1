"""PostBatch.to moves every tensor of a batch (dict-valued text inputs, image tensors, indices, targets)."""

from __future__ import annotations

import collections

import numpy as np
import torch

from faim.data.batch import Elements, PostBatch, element_layout


def test_to_moves_every_tensor_and_keeps_the_rest() -> None:
    post_index, slot_index, slots = element_layout([1, 0, 2])
    text = Elements({"input_ids": torch.ones(3, 4, dtype=torch.long)}, post_index, slot_index, slots)
    image = Elements(torch.zeros(3, 3, 8, 8), post_index, slot_index, slots, encoded=True)
    batch = PostBatch(["a", "b", "c"], {"text": text, "image": image}, {"hate": torch.tensor([0, 1, 1])}, [{}] * 3)
    moved = batch.to(torch.device("meta"))
    tensors = [moved.elements["text"].values["input_ids"], moved.elements["image"].values, moved.targets["hate"]]
    tensors += [e.post_index for e in moved.elements.values()] + [e.slot_index for e in moved.elements.values()]
    assert all(t.device.type == "meta" for t in tensors)
    assert moved.ids == batch.ids and moved.meta == batch.meta and moved.elements["image"].encoded
    assert moved.elements["text"].num_slots == 2 and batch.targets["hate"].device.type == "cpu"


def test_values_of_a_preprocessors_own_kind_are_kept_and_the_tensors_among_them_moved() -> None:
    pair = collections.namedtuple("pair", "ids lengths")
    values = {
        "texts": ["first post", "second"],
        "pieces": (torch.ones(2, 3), np.arange(2), 7),
        "named": pair(torch.ones(2), torch.zeros(2)),
    }
    post_index, slot_index, slots = element_layout([1, 1])
    moved = Elements(values, post_index, slot_index, slots).to(torch.device("meta")).values
    assert moved["texts"] == ["first post", "second"]
    assert isinstance(moved["pieces"], tuple) and moved["pieces"][0].device.type == "meta"
    assert np.array_equal(moved["pieces"][1], np.arange(2)) and moved["pieces"][2] == 7
    assert isinstance(moved["named"], pair) and moved["named"].lengths.device.type == "meta"
