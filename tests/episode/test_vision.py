"""The agent looks (--vision): an image of its sandbox is checked, stored once by hash, and sent in the next
message; whatever is wrong with what it asks to see is its own error, told in the tool's result."""

from __future__ import annotations

import base64
import json

import pytest

from harness.core.images import check_image
from harness.core.reply import ToolCall
from harness.episode.actions import FormatError
from harness.episode.solvers import BashAgent
from harness.episode.solvers.tools import read_action
from harness.models.base import ModelReply
from harness.records.image_store import logged_refs
from tests.helpers.images import png, png_claiming, progressive_jpeg_parts

CHART = png(30, 20, "navy")
CHART_HASH = check_image(CHART).ref.sha256


def put(path: str, data: bytes) -> dict[str, str]:
    """A bash reply that writes DATA to PATH in the sandbox."""
    return {"bash": f"mkdir -p run && echo {base64.b64encode(data).decode()} | base64 -d > {path}"}


def image_views(outcome) -> list[dict]:
    return [event for event in outcome.trajectory("t1") if event["event"] == "image_view"]


def test_an_image_the_agent_made_is_stored_once_and_sent_in_the_next_message(mini):
    views = [{"view_image": "run/chart.png"}, {"view_image": "/workspace/run/chart.png"}]
    model = mini.script([put("run/chart.png", CHART), *views, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--vision")
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 4)
    views = image_views(outcome)
    assert [view["image"]["sha256"] for view in views] == [CHART_HASH, CHART_HASH]
    assert views[0]["image"] | {} == {
        "sha256": CHART_HASH,
        "media_type": "image/png",
        "width": 30,
        "height": 20,
        "bytes": len(CHART),
    }
    assert [path.name for path in (outcome.run_dir / "images").iterdir()] == [f"{CHART_HASH}.png"]
    assert (outcome.run_dir / "images" / f"{CHART_HASH}.png").read_bytes() == CHART
    calls = [event for event in outcome.trajectory("t1") if event["event"] == "model_call"]
    [tool_result] = [message for message in calls[2]["messages"] if message.get("role") == "tool"]
    assert [ref.sha256 for ref in logged_refs(tool_result)] == [CHART_HASH]
    log_text = (outcome.run_dir / "episodes" / "mini" / "t1.jsonl").read_text()
    assert "data:image" not in log_text and "image_url" not in log_text
    protocol = json.dumps(__import__("yaml").safe_load((outcome.run_dir / "run.yaml").read_text())["protocol"])
    assert '"images_per_episode": 20' in protocol


def refused(mini, setup: list[dict[str, str]], path: str, time_limit: str = "600") -> tuple[dict, dict]:
    """The row and the image_view event of an episode that asks to see PATH once, then answers."""
    model = mini.script([*setup, {"view_image": path}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--vision", "--time-limit", time_limit)
    [row] = outcome.rows
    [view] = image_views(outcome)
    return row, view


def test_an_oversized_image_is_the_agents_error(mini):
    row, view = refused(mini, [{"bash": "mkdir -p run && head -c 6000000 /dev/zero > run/big.png"}], "run/big.png")
    assert (row["status"], row["verdict"]) == ("answered", "correct")
    assert "image" not in view
    assert view["problem"] == "run/big.png: the file is 6000000 bytes, over the limit of 3,932,160 bytes per image"
    assert "Exit code: 1" in view["text"] and "view_image: run/big.png: the file is 6000000 bytes" in view["text"]


NOISE_PNG = (
    'python3 -c "import os, struct, zlib; w, h = 1300, 1200; '
    "chunk = lambda t, b: struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b)); "
    "rows = b''.join(b'\\0' + os.urandom(3 * w) for _ in range(h)); "
    "head = chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)); "
    "body = chunk(b'IDAT', zlib.compress(rows, 1)) + chunk(b'IEND', b''); "
    "open('run/noise.png', 'wb').write(bytes([137]) + b'PNG\\r\\n\\x1a\\n' + head + body)\""
)
"""A valid PNG of 1300 x 1200 pixels of noise, about 4.7 MB (it does not compress), made in the sandbox."""


def test_an_image_over_anthropics_base64_limit_is_the_agents_error(mini):
    """Issue 45: view_image took 5 MiB of file, Anthropic takes 5 MB of base64 text (3.75 MiB of file): a 4.6 MB
    PNG drew a 400, then `model_error` and an in-run retry. It is refused before the call, the agent told."""
    row, view = refused(mini, [{"bash": f"mkdir -p run && {NOISE_PNG} && wc -c run/noise.png"}], "run/noise.png")
    assert (row["status"], row["verdict"]) == ("answered", "correct")
    assert "image" not in view and "over the limit of 3,932,160 bytes per image" in view["problem"]


def test_a_progressive_jpeg_decode_bomb_is_the_agents_error_within_the_episodes_time(mini):
    """Issue 45: a progressive JPEG within every size limit took 216 s to decode in the runner. Here one
    refinement scan over 4000 x 4000 pixels repeated 5,000 times (217 KB; 50 s to decode on an idle core, far
    more on a busy one), made in the sandbox: decoded in a worker bounded by the episode's time left, refused."""
    head, scan = progressive_jpeg_parts(4000)
    copies = "python3 -c \"import sys; sys.stdout.buffer.write(open('run/scan', 'rb').read() * 5000)\""
    made = [
        put("run/head", head),
        put("run/scan", scan),
        {"bash": f"{{ cat run/head; {copies}; printf '\\377\\331'; }} > run/scans.jpg"},
    ]
    row, view = refused(mini, made, "run/scans.jpg", "6")
    assert row["status"] in ("answered", "time_limit")
    assert "image" not in view and view["problem"].startswith("run/scans.jpg: the image takes longer than"), view


def test_a_malformed_image_is_the_agents_error(mini):
    row, view = refused(mini, [put("run/fake.png", b"<svg>not a png</svg>")], "run/fake.png")
    assert row["status"] == "answered"
    assert view["problem"] == "run/fake.png: the file is not an image of an accepted format (PNG, JPEG, WEBP)"


def test_a_decompression_bomb_is_the_agents_error(mini):
    row, view = refused(mini, [put("run/bomb.png", png_claiming(60_000, 60_000))], "run/bomb.png")
    assert row["status"] == "answered"
    assert view["problem"].startswith("run/bomb.png: the image is a decompression bomb")


def test_a_directory_is_the_agents_error(mini):
    row, view = refused(mini, [], "documents")
    assert (row["status"], view["problem"]) == ("answered", "documents: not a regular file")


def test_a_path_no_file_can_have_is_the_agents_error(mini):
    row, view = refused(mini, [], "run/" + "x" * 200_000)
    assert (row["status"], view["problem"]) == ("answered", "the path is 200,004 characters; a path has at most 4096")


def test_more_images_than_an_episode_may_show_is_the_agents_error(mini):
    views = [{"view_image": "run/chart.png"}] * 21
    model = mini.script([put("run/chart.png", CHART), *views, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--vision", "--max-turns", "30")
    [row] = outcome.rows
    assert (row["status"], row["verdict"]) == ("answered", "correct")
    shown = image_views(outcome)
    assert ["image" in view for view in shown] == [True] * 20 + [False]
    assert shown[-1]["problem"] == "this episode has shown its 20 images, the most it may"


def test_vision_needs_tool_calls(mini):
    outcome = mini.run("--model", "oracle", "--vision", "--action-format", "text")
    assert outcome.exit_code == 2
    assert "--vision: the agent looks through its view_image tool, so it needs --action-format toolcall" in (
        outcome.output
    )


def test_vision_is_refused_on_a_ray_cluster_before_anything_is_written(mini):
    outcome = mini.run("--model", "oracle", "--vision", "--executor", "ray")
    assert outcome.exit_code == 2
    assert "--vision: not with --executor ray yet" in outcome.output
    assert not outcome.run_dir.exists()


def test_two_images_in_one_turn_are_the_agents_format_error():
    calls = [ToolCall(id=f"c{n}", name="view_image", arguments=json.dumps({"path": f"p{n}.png"})) for n in (1, 2)]
    reply = ModelReply(text="", tool_calls=calls)
    with pytest.raises(FormatError, match="2 tool calls in one reply; make exactly one"):
        read_action(reply, "toolcall", BashAgent.tools(vision=True))
    with pytest.raises(FormatError, match="the view_image tool needs a non-empty string argument 'path'"):
        no_path = ModelReply(text="", tool_calls=[ToolCall(id="c", name="view_image", arguments='{"path": 3}')])
        read_action(no_path, "toolcall", BashAgent.tools(vision=True))


class _Files:
    """A sandbox that hands out files from a dict, as file_read's protocol says."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        from harness.sandboxes.file_read import FileUnreadable

        data = self.files[path]
        if len(data) > max_bytes:
            raise FileUnreadable(f"{path}: the file is {len(data)} bytes, over the limit of {max_bytes:,} bytes")
        return data


def test_the_episodes_image_bytes_are_bounded_in_all(tmp_path):
    from harness.core.images import ImageRefused
    from harness.episode.vision import ImageViewer, VisionLimits
    from harness.records.image_store import ImageStore

    big = png(300, 300, "white")
    viewer = ImageViewer(_Files({"a.png": big}), ImageStore(tmp_path), VisionLimits(episode_bytes=len(big) + 10))
    assert viewer.view("a.png", 30).ref.bytes == len(big)
    with pytest.raises(ImageRefused, match=r"the episode's images may total [\d,]+ bytes and 10 are left"):
        viewer.view("a.png", 30)


def test_an_image_is_bounded_by_the_runs_provider_s_documented_limit(tmp_path):
    """A 4+ MB image: past Anthropic's 5 MB of base64 (the strictest, for a model calling no provider), within
    OpenAI's 50 MB a request; the protocol records whose limits applied, and nothing for a model calling none."""
    import os

    from PIL import Image

    from harness.core.images import ImageRefused
    from harness.episode.vision import ImageViewer, VisionLimits
    from harness.inputs.limits import request_limits
    from harness.records.image_store import ImageStore

    big = _png_bytes(Image.frombytes("RGB", (1200, 1200), os.urandom(1200 * 1200 * 3)))
    files = _Files({"noise.png": big})
    assert len(big) > 3_932_160
    openai = VisionLimits.of(request_limits("openai"))
    assert ImageViewer(files, ImageStore(tmp_path / "a"), openai).view("noise.png", 30).ref.bytes == len(big)
    with pytest.raises(ImageRefused, match="over the limit of 3,932,160 bytes"):
        ImageViewer(files, ImageStore(tmp_path / "b"), VisionLimits.of(request_limits(None))).view("noise.png", 30)
    assert openai.describe()["request_limits"]["provider"] == "openai"
    assert VisionLimits.of(request_limits(None)).describe() == VisionLimits().describe()  # as before providers


def _png_bytes(image) -> bytes:
    from tests.helpers.images import encoded

    return encoded(image, "PNG")
