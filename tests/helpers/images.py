"""Images for tests, drawn with Pillow: valid ones of any size and format, and the hostile kinds an agent could
leave in its sandbox (malformed, truncated, decompression bombs, animated)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def png(width: int = 4, height: int = 3, color: str = "red") -> bytes:
    return encoded(Image.new("RGB", (width, height), color), "PNG")


def encoded(image: Image.Image, image_format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, image_format, **options)
    return buffer.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG file whose header claims WIDTHxHEIGHT pixels (a decompression bomb's shape: a few hundred bytes
    that would decode to gigabytes); its one IDAT holds a compressed run of zeros far shorter than claimed."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 4096, 9))
        + chunk(b"IEND", b"")
    )


def animated_gif_as_webp() -> bytes:
    frames = [Image.new("RGB", (8, 8), color) for color in ("red", "blue")]
    return encoded(frames[0], "WEBP", save_all=True, append_images=frames[1:], duration=100, loop=0)


def progressive_jpeg_parts(side: int) -> tuple[bytes, bytes]:
    """A progressive JPEG of SIDE x SIDE grey pixels without its end marker, and its last scan (an AC refinement
    of 31 bytes). Repeated, that scan is issue 45's decode bomb: libjpeg decodes every scan over the whole
    image, so each copy costs as much as a page of text and a few KB of copies take seconds."""
    data = encoded(Image.new("L", (side, side), 128), "JPEG", progressive=True, quality=90)
    return data[:-2], data[data.rindex(b"\xff\xda") : -2]
