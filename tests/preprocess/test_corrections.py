"""Telling posts that question or correct what they share (``faim.preprocess.corrections``)."""

from __future__ import annotations

import pytest

from faim.data.post import Post
from faim.preprocess.corrections import questions_or_corrects


@pytest.mark.parametrize(
    "text",
    [
        "Is this real?? #sandy",
        "is that true? shark on the highway",
        "This is NOT real, it's from a movie",
        "Unconfirmed reports of a second blast",
        "rumour going round about the statue",
        "FAKE. Stop sharing it",
        "False! this picture is from 2011",
        "another hoax picture",
        "already debunked by snopes",
        "clearly photoshopped",
        "that's been shopped",
        "a doctored image",
        "esa foto es real? #Sandy",
        "¿Será verdad? tiburones en el metro",
        "no es cierto, es de una película",
        "Fotografías falsas de Sandy en Nueva York",
        "el fotomontaje que se volvió viral",
        "otro bulo más",
        "una imagen retocada",
        "¿ES REAL? el tiburón de la autopista",
    ],
)
def test_enquiries_and_corrections_are_told(text: str) -> None:
    assert questions_or_corrects(Post("p", text=text))


@pytest.mark.parametrize(
    "text",
    [
        "Storm surge floods the subway at South Ferry",
        "the real deal: photos from the marathon",
        "true story, stay safe everyone",
        "shopping for supplies before the storm",
        "a falsetto singer at the memorial",
        "Es real: el metro inundado",
        "la verdad es que da miedo",
        "",
    ],
)
def test_ordinary_posts_are_not(text: str) -> None:
    assert not questions_or_corrects(Post("p", text=text))


def test_a_comment_that_corrects_counts_for_its_post() -> None:
    assert questions_or_corrects(Post("p", text="Shark swimming in the street!", comments=["nice", "this is fake"]))
    assert not questions_or_corrects(Post("p", text=None, comments=["nice"]))
