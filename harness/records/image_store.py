"""The run folder's images: each stored once, by its hash, as `images/<sha256>.<ext>`; records name it by its
`ImageRef` (core/images.py), never hold its bytes.

A hash from a record is untrusted text (a trajectory can be edited, imported, served by the viewer): only 64
lowercase hex digits name a file here, so no name can climb out of the folder, and bytes read back are checked
against their hash.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.core.images import EXTENSIONS, CheckedImage, ImageRef, image_of_part, image_part
from harness.core.messages import ContentPart, Message

IMAGES_FOLDER = "images"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def is_image_hash(text: str) -> bool:
    """Whether TEXT is a hash an image of the store can have (64 lowercase hex digits)."""
    return _SHA256.fullmatch(text) is not None


@dataclass(frozen=True)
class ImageStore:
    run_dir: Path

    @property
    def folder(self) -> Path:
        return self.run_dir / IMAGES_FOLDER

    def path_of(self, ref: ImageRef) -> Path:
        """Where the image is (or would be) stored; a `ValueError` for a hash or media type no image has."""
        if not is_image_hash(ref.sha256) or ref.media_type not in EXTENSIONS:
            raise ValueError(f"not an image reference: {ref.sha256!r} ({ref.media_type!r})")
        return self.folder / f"{ref.sha256}.{EXTENSIONS[ref.media_type]}"

    def put(self, image: CheckedImage) -> ImageRef:
        """Store the image unless it is there already (written whole, then renamed into place)."""
        path = self.path_of(image.ref)
        if not path.is_file():
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            temporary.write_bytes(image.data)
            os.replace(temporary, path)
        return image.ref

    def find(self, sha256: str) -> tuple[bytes, str] | None:
        """The bytes and media type of the image stored under SHA256, None when there is none whose bytes are
        that hash's (or SHA256 is no hash): for a reader that has only a name (the viewer's request)."""
        if not is_image_hash(sha256):
            return None
        for media_type, extension in EXTENSIONS.items():
            try:
                data = (self.folder / f"{sha256}.{extension}").read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == sha256:
                return data, media_type
        return None

    def get(self, ref: ImageRef) -> bytes:
        """The image's bytes; a `ValueError` when the file is missing or not the bytes its hash names."""
        path = self.path_of(ref)
        try:
            data = path.read_bytes()
        except OSError:
            raise ValueError(f"{path}: the image is missing from the run folder") from None
        if hashlib.sha256(data).hexdigest() != ref.sha256:
            raise ValueError(f"{path}: the file is not the image its name says (its hash differs)")
        return data


LOGGED_IMAGE = "image"
"""The type of a logged message part that stands for an image: `{"type": "image", "image": <ImageRef fields>}`."""


def logged_part(part: Any) -> Any:
    """A message part as a trajectory keeps it: an image part (a data URL) as its reference, any other as it is."""
    image = image_of_part(part)
    return part if image is None else {"type": LOGGED_IMAGE, "image": image.ref.model_dump()}


def logged_ref(part: Any) -> ImageRef | None:
    """The reference a logged image part holds, None for any other part (or one whose reference is malformed)."""
    if not isinstance(part, dict) or part.get("type") != LOGGED_IMAGE:
        return None
    try:
        ref = ImageRef.model_validate(part.get("image"))
    except ValidationError:
        return None
    return ref if is_image_hash(ref.sha256) and ref.media_type in EXTENSIONS else None


def logged_refs(message: Message) -> list[ImageRef]:
    """The images a logged message shows, in order."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [ref for part in content if (ref := logged_ref(part)) is not None]


def restored_images(messages: list[Message], store: ImageStore) -> list[Message]:
    """Logged messages with each image reference a data URL part again, its bytes read from STORE (a
    `ValueError` when one is missing or not its hash's bytes)."""
    restored = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(logged_ref(part) for part in content):
            parts: list[ContentPart] = []
            for part in content:
                ref = logged_ref(part)
                parts.append(part if ref is None else image_part(CheckedImage(ref, store.get(ref))))
            message = {**message, "content": parts}
        restored.append(message)
    return restored
