"""Built-in encoders; importing this package registers them."""

from faim.encoders import hf_text, meta_numeric, timm_image, tiny_image, tiny_text  # noqa: F401
