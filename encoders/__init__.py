"""Built-in encoders; importing this package registers them."""

from faim.encoders import (  # noqa: F401
    clip,
    e5_text,
    hf_text,
    meta_numeric,
    ngram_text,
    timm_image,
    tiny_e5,
    tiny_image,
    tiny_text,
    tiny_use,
    torchvision_image,
    use_text,
)
