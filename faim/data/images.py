"""Open a post's image (a path or raw bytes) as a fully decoded RGB ``PIL.Image``, or fail with one clear error.

Decoding happens here, not lazily later, so a truncated or corrupt file fails where its name is known. Images larger
than ``PIL.Image.MAX_IMAGE_PIXELS`` (about 89 megapixels by default; set it to ``None`` to lift the limit, or use
``pixel_limit``) are refused as possible decompression bombs; ``faim score`` hands the limit of the process that
runs it to every scorer it starts.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from faim.data.post import list_as_text

ImageRef = str | bytes | Path

IMAGE_DECODING = 2
"""The version of how a picture's file becomes its pixels here (``load_image``), which the embedding cache keys
pictures by (``faim.training.cache.image_stamp``): raise it with every change that gives some picture other pixels,
so embeddings cached of pictures decoded the old way are computed anew rather than read. 2: grey pictures of more
than 8 bits a sample scaled to 8 (``_eight_bit``), where before (caches keyed with no version) they were clipped,
a 16-bit picture white."""


class ImageError(ValueError):
    """An image that cannot be used, with ``kind`` one of ``missing``, ``empty``, ``unreadable``,
    ``truncated`` or ``bomb`` (for error counts by kind)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def load_image(ref: ImageRef, root: Path | None = None, draft_size: tuple[int, int] | None = None) -> Image.Image:
    """Open, fully decode and return an RGB image, with EXIF orientation applied.

    Args:
        ref: A file path (relative paths resolve against ``root``) or the encoded image bytes.
        root: Directory that relative paths are relative to; ``None``: the current directory.
        draft_size: For JPEGs, let the decoder scale down by 1/2, 1/4 or 1/8 while decoding, as long as
            the result stays at least this large (``PIL.Image.draft``): much faster for large photos that
            are resized anyway, with slightly different pixels. ``None`` decodes at full size.

    Raises:
        ImageError: Naming the image and the problem.
    """
    source = check_picture(ref, root)
    label = f"<{len(ref)} bytes>" if isinstance(ref, bytes) else _path_label(str(ref))
    return _decode(io.BytesIO(source) if isinstance(source, bytes) else source, label, draft_size)


URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
"""The start of a URL (``https://``, ``s3://``), which a picture's path that names no file may be; a scheme of one
letter is a Windows drive (``C://data/a.jpg``)."""


def check_picture(ref: ImageRef, root: Path | None = None) -> bytes | Path:
    """What a picture is read from (its bytes, or the file its path names, resolved against ``root`` as
    ``load_image`` resolves it), once a look at the file system that reads no byte of it finds it there: a file
    (not missing, not a folder), and neither it nor the bytes empty. Whether it decodes is not looked at.

    Raises:
        ImageError: Of kind ``missing`` (a URL naming no file too, saying that it is not fetched), ``empty`` or
            ``unreadable`` (a folder on the way that may not be searched), naming the picture.
    """
    if isinstance(ref, bytes):
        if not ref:
            raise ImageError(f"image <{len(ref)} bytes>: empty", "empty")
        return ref
    path = Path(ref).expanduser()
    resolved = path if path.is_absolute() or root is None else Path(root) / path
    label = _path_label(str(ref))
    try:
        if not resolved.is_file():
            if URL.match(str(ref)):
                fetch = "download the pictures and give their files' paths (or bytes)"
                raise ImageError(f"image {label}: a URL, which faim does not fetch: {fetch}", "missing")
            problem = "is a directory" if resolved.is_dir() else "file not found"
            hint = list_as_text(str(ref), "pictures")
            raise ImageError(f"image {label}: {problem} (resolved to {resolved.absolute()}){hint}", "missing")
        size = resolved.stat().st_size
    except OSError as error:  # a name longer than the system takes, a folder on the way that may not be searched
        kind = "unreadable" if isinstance(error, PermissionError) else "missing"
        raise ImageError(f"image {label}: {error.strerror}", kind) from None
    if size == 0:
        raise ImageError(f"image {label}: empty file", "empty")
    return resolved


PILLOW_PIXELS = 1024 * 1024 * 1024 // 4 // 3
"""Pillow's own decompression-bomb limit (``PIL.Image.MAX_IMAGE_PIXELS`` as Pillow sets it): a picture of more
pixels is warned of, of twice as many refused, and faim refuses both."""

LIFT_LIMIT = (
    "faim score --max-image-pixels N raises the limit (none lifts it), as setting PIL.Image.MAX_IMAGE_PIXELS does in "
    "Python"
)
"""How a picture refused as a possible decompression bomb may be read, as its error ends."""


@contextmanager
def pixel_limit(limit: int | None) -> Iterator[None]:
    """Refuse as possible decompression bombs pictures of more than ``limit`` pixels (``None``: none) inside the
    block, in this process (``PIL.Image.MAX_IMAGE_PIXELS``, and so in the scorers a ``faim score`` run started here
    starts), and put the process's limit back after it."""
    before = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limit
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


LABEL_CHARACTERS = 100
"""The most characters of an image path an error shows (a ``data:`` URL in a path column holds thousands)."""


def _path_label(path: str) -> str:
    """An image path as errors name it: quoted, a longer one than ``LABEL_CHARACTERS`` cut, with its length."""
    if len(path) <= LABEL_CHARACTERS:
        return f"'{path}'"
    return f"'{path[:LABEL_CHARACTERS]}...' ({len(path)} characters)"


def _decode(source: Path | io.BytesIO, label: str, draft_size: tuple[int, int] | None) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(source) as image:
                if draft_size is not None and image.format == "JPEG":
                    image.draft("RGB", draft_size)
                image.load()
                return _to_rgb(ImageOps.exif_transpose(image))  # a copy: the source closes here
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise ImageError(
            f"image {label}: too large, possible decompression bomb ({error}); {LIFT_LIMIT}", "bomb"
        ) from None
    except UnidentifiedImageError:
        raise ImageError(f"image {label}: not a recognised image format", "unreadable") from None
    except OSError as error:
        if "truncated" in str(error).lower():
            raise ImageError(f"image {label}: truncated ({error})", "truncated") from None
        raise ImageError(f"image {label}: corrupt or unreadable ({error})", "unreadable") from None
    except (SyntaxError, ValueError, EOFError) as error:  # PIL's plugins raise these for malformed data
        raise ImageError(f"image {label}: corrupt ({type(error).__name__}: {error})", "unreadable") from None


def _to_rgb(image: Image.Image) -> Image.Image:
    """The picture in RGB; a transparent one (an alpha channel, or a palette or grey one with a transparent
    colour, as stickers and emoji are) laid on white, as a viewer shows it, rather than on whatever colour its
    transparent pixels happen to hold; a grey one of more than 8 bits a sample scaled to 8 (``_eight_bit``)."""
    if image.mode == "RGB":
        return image
    if image.mode in WIDE_GREYS or image.mode.startswith("I;16"):
        image = _eight_bit(image)
    if image.mode in ("P", "L") and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return image.convert("RGB")


WIDE_GREYS = {"I": (65535, 2**31 - 1), "F": (1.0, 255.0, 65535.0)}
"""The full scales a grey mode of more than 8 bits a sample may be at (``I``: 32-bit integers, as Pillow opens
32-bit and some 16-bit files; ``F``: floats, from 0 to 1 as floating-point pictures most often are, or from 0 to
255 or to 65535 as 8- and 16-bit ones converted are), the first holding the brightest sample taken; Pillow's 16-bit
modes (``I;16``, ``I;16B``...) are at 65535."""


def _eight_bit(image: Image.Image) -> Image.Image:
    """A grey picture of 16- or 32-bit integer or floating-point samples (``WIDE_GREYS``) as an 8-bit one (mode
    ``L``), its full scale made 255 and samples beyond it, or below 0, clipped: Pillow's own conversion clips the
    samples at 255, so a 16-bit picture came out white and one of floats from 0 to 1 black."""
    samples = np.nan_to_num(np.asarray(image, dtype=np.float64), nan=0.0)
    brightest = float(samples.max(initial=0.0))
    scales = WIDE_GREYS.get(image.mode, (65535,))
    full = next((scale for scale in scales if brightest <= scale), scales[-1])
    return Image.fromarray(np.clip(np.rint(samples * (255 / full)), 0, 255).astype(np.uint8), "L")
