"""Posts that question or correct what they share: the crowd's own verdict on a picture.

When a doctored or misattributed picture spreads, some of the posts that share it, or the replies under them, ask
whether it is real or say that it is not. Zhao, Resnick and Mei ("Enquiring Minds", WWW 2015) found such enquiry
and correction posts early in the spread of most rumours, and too rarely among other posts to be chance. One such
post says little about its own picture; the share of them among every post that shows the picture says much more,
which is why faim reads them when it pools posts by shared picture (``eval.crowd_corrections``).

The patterns follow theirs (enquiry: "is this true?", "is it real?", "unconfirmed", "rumour"; correction: "not
true", "not real", "fake", "false", "hoax", "debunked", "photoshopped", "doctored"), in English and in Spanish
("¿es real?", "¿será verdad?", "no es cierto", "falsa", "fotomontaje", "bulo", "retocada"), the two languages in
which the posts of MediaEval's VMU set correct the pictures they share. A post in another language is not read as
questioning or correcting.
"""

from __future__ import annotations

import re

from faim.data.post import Post

CORRECTION = re.compile(
    r"\b(?=[bdefhinprsu])"
    r"(?:is (?:this|that|it) (?:true|real)\b"
    r"|not (?:true|real)\b"
    r"|unconfirmed\b|rumou?rs?\b"
    r"|fake\b|false\b|hoax\w*|debunk\w*"
    r"|photoshop\w*|(?:photo)?shopped\b|doctored\b"
    r"|(?:es|será|sera) (?:real|verdad|cierto)\s*\?|no es (?:real|verdad|cierto)\b"
    r"|fals[oa]s?\b|fotomontajes?\b|bulos?\b|retocad[oa]s?\b)",
    re.IGNORECASE,
)
"""An enquiry into, or a correction of, what a post shares (after Zhao, Resnick and Mei, 2015), in English or
Spanish: a word beginning one of the patterns (``¿es real?`` read from its ``es``). The lookahead names the letters
the patterns begin with, so that a word beginning with any other is passed over at once rather than tried against
each pattern: every post a model scores is read so."""


def questions_or_corrects(post: Post) -> bool:
    """Whether the post's text or one of its comments asks whether what it shares is real, or says it is not."""
    return any(CORRECTION.search(text) for text in (post.text or "", *post.comments))
