"""Images stored once by hash in the run folder, logged as references, and read back only by a well-formed hash."""

from __future__ import annotations

import pytest

from harness.core.images import ImageRef, check_image, user_message
from harness.records.compact import compact_messages
from harness.records.image_store import ImageStore, logged_refs, restored_images
from tests.helpers.images import png

IMAGE = check_image(png(7, 5))


def test_an_image_is_stored_once_by_its_hash(tmp_path):
    store = ImageStore(tmp_path)
    store.put(IMAGE)
    store.put(IMAGE)
    assert [path.name for path in store.folder.iterdir()] == [f"{IMAGE.ref.sha256}.png"]
    assert store.get(IMAGE.ref) == IMAGE.data


def test_a_logged_message_holds_the_reference_not_the_bytes(tmp_path):
    store = ImageStore(tmp_path)
    store.put(IMAGE)
    logged = compact_messages([user_message("look", [IMAGE])], None)
    assert "base64" not in str(logged)
    assert logged_refs(logged[0]) == [IMAGE.ref]
    assert restored_images(logged, store) == [user_message("look", [IMAGE])]


@pytest.mark.parametrize("sha", ["../../etc/passwd", "A" * 64, "0" * 63, "0" * 64 + "/x"])
def test_a_hash_that_is_not_one_names_no_file(tmp_path, sha):
    with pytest.raises(ValueError, match="not an image reference"):
        ImageStore(tmp_path).path_of(IMAGE.ref.model_copy(update={"sha256": sha}))


def test_a_file_changed_in_the_folder_is_not_read_back(tmp_path):
    store = ImageStore(tmp_path)
    store.put(IMAGE)
    store.path_of(IMAGE.ref).write_bytes(png(8, 5))
    with pytest.raises(ValueError, match="hash differs"):
        store.get(IMAGE.ref)
    with pytest.raises(ValueError, match="missing"):
        store.get(ImageRef(sha256="0" * 64, media_type="image/png", width=1, height=1, bytes=1))
