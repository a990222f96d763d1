"""load_image: paths and bytes in, decoded RGB images out, one clear ImageError for every bad input."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from faim.data.images import ImageError, load_image


def encoded(fmt: str = "PNG", mode: str = "RGB", size: tuple[int, int] = (40, 30), **save: object) -> bytes:
    pixels = np.random.default_rng(0).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).convert(mode).save(buffer, fmt, **save)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "GIF", "WEBP"])
def test_loads_common_formats_as_rgb(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"a.{fmt.lower()}"
    path.write_bytes(encoded(fmt))
    image = load_image(str(path), None)
    assert image.mode == "RGB" and image.size == (40, 30)
    assert np.asarray(image).shape == (30, 40, 3)


@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "1", "CMYK"])
def test_converts_other_modes_to_rgb(mode: str) -> None:
    fmt = "JPEG" if mode == "CMYK" else "PNG"
    assert load_image(encoded(fmt, mode), None).mode == "RGB"


def test_palette_with_transparency() -> None:
    image = Image.new("P", (8, 8))
    image.info["transparency"] = 0
    buffer = io.BytesIO()
    image.save(buffer, "PNG", transparency=0)
    assert load_image(buffer.getvalue(), None).mode == "RGB"


def test_transparent_pixels_are_laid_on_white() -> None:
    pixels = np.zeros((4, 4, 4), dtype=np.uint8)  # black, and transparent but for one red opaque pixel
    pixels[0, 0] = (255, 0, 0, 255)
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(buffer, "PNG")
    rgb = np.asarray(load_image(buffer.getvalue(), None))
    assert rgb[0, 0].tolist() == [255, 0, 0] and rgb[3, 3].tolist() == [255, 255, 255]


def test_relative_path_resolves_against_root(tmp_path: Path) -> None:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "x.png").write_bytes(encoded())
    assert load_image("img/x.png", tmp_path).size == (40, 30)
    assert load_image(Path("img/x.png"), tmp_path).size == (40, 30)


def test_absolute_path_ignores_root(tmp_path: Path) -> None:
    path = tmp_path / "x.png"
    path.write_bytes(encoded())
    assert load_image(path, tmp_path / "elsewhere").size == (40, 30)


def test_bytes_input() -> None:
    assert load_image(encoded("JPEG"), None).size == (40, 30)


def test_exif_orientation_applied() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise on display
    assert load_image(encoded("JPEG", exif=exif.tobytes()), None).size == (30, 40)


def test_missing_file_names_path_and_resolution(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"image 'a/b\.jpg': file not found \(resolved to .*a/b\.jpg\)"):
        load_image("a/b.jpg", tmp_path)


def test_a_name_the_system_refuses_is_an_image_error_naming_the_reason_and_a_cut_form_of_it(tmp_path: Path) -> None:
    data_url = "data:image/jpeg;base64," + "A" * 7800
    with pytest.raises(ImageError, match=r"^image 'data:image/jpeg;base64,A+\.\.\.' \(7823 characters\): ") as error:
        load_image(data_url, tmp_path)
    assert error.value.kind == "missing" and str(error.value).endswith("File name too long")
    with pytest.raises(ImageError, match=r"\(300 characters\): File name too long$"):
        load_image("x" * 296 + ".jpg", tmp_path)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="is a directory"):
        load_image(tmp_path, None)


def test_empty_bytes_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"image <0 bytes>: empty"):
        load_image(b"", None)
    (tmp_path / "e.jpg").write_bytes(b"")
    with pytest.raises(ImageError, match="'e.jpg': empty file"):
        load_image("e.jpg", tmp_path)


def test_not_an_image(tmp_path: Path) -> None:
    (tmp_path / "x.jpg").write_bytes(np.random.default_rng(1).bytes(500))
    with pytest.raises(ImageError, match="'x.jpg': not a recognised image format"):
        load_image("x.jpg", tmp_path)
    with pytest.raises(ImageError, match=r"<5 bytes>: not a recognised image format"):
        load_image(b"hello", None)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_truncated(tmp_path: Path, fmt: str) -> None:
    data = encoded(fmt, size=(64, 64))
    (tmp_path / "t.img").write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageError, match="'t.img': truncated"):
        load_image("t.img", tmp_path)


def test_corrupt_png_data() -> None:
    data = bytearray(encoded("PNG", size=(64, 64)))
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)
    with pytest.raises(ImageError, match="corrupt"):
        load_image(bytes(data), None)


@pytest.mark.parametrize("limit", [1000, 500])  # 40x30 = 1200 pixels: over the limit (warning) and over twice it
def test_decompression_bomb(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", limit)
    with pytest.raises(ImageError, match="too large, possible decompression bomb") as error:
        load_image(encoded(), None)
    assert str(error.value).endswith(
        "; faim score --max-image-pixels N raises the limit (none lifts it), as setting PIL.Image.MAX_IMAGE_PIXELS "
        "does in Python"
    )


def test_no_pixel_limit_when_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    assert load_image(encoded(), None).size == (40, 30)


def test_image_error_is_value_error() -> None:
    assert issubclass(ImageError, ValueError)


def saved(samples: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(samples).save(buffer, fmt)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("samples", "fmt", "grey"),
    [
        (np.array([[0, 25700, 65535]], np.uint16), "PNG", [0, 100, 255]),  # mode I;16
        (np.array([[0, 25700, 65535]], np.uint16), "TIFF", [0, 100, 255]),  # mode I;16
        (np.array([[0, 25700, 65535]], np.int32), "TIFF", [0, 100, 255]),  # mode I, 16-bit samples
        (np.array([[-5, 2**30, 2**31 - 1]], np.int32), "TIFF", [0, 128, 255]),  # mode I, 32-bit samples
        (np.array([[0.0, 0.5, 1.0]], np.float32), "TIFF", [0, 128, 255]),  # mode F, from 0 to 1
        (np.array([[0.0, 100.0, 255.0]], np.float32), "TIFF", [0, 100, 255]),  # mode F, from 0 to 255
        (np.array([[-1.0, 0.5, 2.0e6]], np.float32), "TIFF", [0, 0, 255]),  # mode F, beyond 65535: clipped
    ],
)
def test_greys_of_more_than_8_bits_are_scaled_to_8_bits(samples: np.ndarray, fmt: str, grey: list[int]) -> None:
    rgb = np.asarray(load_image(saved(samples, fmt), None))
    assert rgb[0].tolist() == [[value] * 3 for value in grey]


def test_a_missing_path_that_is_a_json_list_says_where_such_lists_are_read(tmp_path: Path) -> None:
    with pytest.raises(
        ImageError, match=r"file not found \(resolved to .*\); a JSON list written as text is read as a"
    ):
        load_image('["a.png", "b.png"]', tmp_path)
    with pytest.raises(ImageError, match=r"file not found \(resolved to [^)]*\)$"):
        load_image("[draft] a.png", tmp_path)


@pytest.mark.parametrize("url", ["https://cdn.example.com/a.jpg", "HTTP://example.com/a.png", "s3://bucket/a.jpg"])
def test_a_picture_named_by_a_url_is_refused_saying_urls_are_not_fetched(url: str, tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=rf"image '{url}': a URL, which faim does not fetch: download the pictures"):
        load_image(url, tmp_path)
    for path in ("https:/example.com/a.jpg", "C://data/a.jpg"):  # a Windows drive is no URL's scheme
        with pytest.raises(ImageError, match=r"file not found \(resolved to [^)]*\)$"):
            load_image(path, tmp_path)
