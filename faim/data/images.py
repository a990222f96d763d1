"""Open a post's image (a path or raw bytes) as a fully decoded RGB ``PIL.Image``, or fail with one clear error.

Decoding happens here, not lazily later, so a truncated or corrupt file fails where its name is known. Images larger
than ``PIL.Image.MAX_IMAGE_PIXELS`` (about 89 megapixels by default; set it to ``None`` to lift the limit) are
refused as possible decompression bombs.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

ImageRef = str | bytes | Path


class ImageError(ValueError):
    """An image that cannot be used: missing, not an image, corrupt, truncated or too large."""


def load_image(ref: ImageRef, root: Path | None = None) -> Image.Image:
    """Open, fully decode and return an RGB image, with EXIF orientation applied.

    Args:
        ref: A file path (relative paths resolve against ``root``) or the encoded image bytes.
        root: Directory that relative paths are relative to; ``None``: the current directory.

    Raises:
        ImageError: Naming the image and the problem.
    """
    if isinstance(ref, bytes):
        label = f"<{len(ref)} bytes>"
        if not ref:
            raise ImageError(f"image {label}: empty")
        return _decode(io.BytesIO(ref), label)
    path = Path(ref).expanduser()
    resolved = path if path.is_absolute() or root is None else Path(root) / path
    label = f"'{ref}'"
    if not resolved.is_file():
        problem = "is a directory" if resolved.is_dir() else "file not found"
        raise ImageError(f"image {label}: {problem} (resolved to {resolved.absolute()})")
    if resolved.stat().st_size == 0:
        raise ImageError(f"image {label}: empty file")
    return _decode(resolved, label)


def _decode(source: Path | io.BytesIO, label: str) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(source) as image:
                image.load()
                return _to_rgb(ImageOps.exif_transpose(image))  # a copy: the source closes here
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise ImageError(f"image {label}: too large, possible decompression bomb ({error})") from None
    except UnidentifiedImageError:
        raise ImageError(f"image {label}: not a recognised image format") from None
    except OSError as error:
        if "truncated" in str(error).lower():
            raise ImageError(f"image {label}: truncated ({error})") from None
        raise ImageError(f"image {label}: corrupt or unreadable ({error})") from None
    except (SyntaxError, ValueError, EOFError) as error:  # PIL's plugins raise these for malformed data
        raise ImageError(f"image {label}: corrupt ({type(error).__name__}: {error})") from None


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    return image.convert("RGB")
