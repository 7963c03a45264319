"""A vision run's images in every reader: `show` names where the run folder keeps them, the viewer shows them
from there (by hash only), `export inspect` writes them as ContentImage, and `replay` gives them back."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest

from harness.cli.main import main
from harness.core.images import check_image
from tests.helpers.images import png

CHART = png(24, 16, "teal")
SHA = check_image(CHART).ref.sha256
WRITE = {"bash": f"mkdir -p run && echo {base64.b64encode(CHART).decode()} | base64 -d > run/chart.png"}


@pytest.fixture
def vision_run(mini):
    script = mini.script(
        [WRITE, {"view_image": "run/chart.png"}, {"view_image": "run/none.png"}, "<answer>42</answer>"]
    )
    outcome = mini.run("--model", script, "--vision")
    assert outcome.exit_code == 0, outcome.output
    return outcome


def test_show_names_the_stored_image_and_the_refusal(mini, vision_run):
    assert main(["show", str(vision_run.run_dir), "t1"]) == 0
    output = mini.capsys.readouterr().out
    assert "$ view_image run/chart.png" in output
    unwrapped = output.replace("\n", "")  # the console folds the long path
    assert f"24x16 image/png, {len(CHART)} bytes: {vision_run.run_dir / 'images' / SHA}.png" in unwrapped
    assert "refused: run/none.png: no such file" in output


def test_the_viewer_serves_the_image_by_its_hash_and_nothing_else(vision_run):
    from harness.analysis.viewer_server import ViewerServer
    from harness.analysis.viewer_site import ViewerSite

    (vision_run.run_dir / "images" / f"{'0' * 64}.png").write_bytes(b"not the image its name says")
    server = ViewerServer(ViewerSite([vision_run.run_dir]))
    try:
        with urllib.request.urlopen(server.url + "episodes/0.json") as response:
            steps = json.loads(response.read())["steps"]
        views = [step["image"] for step in steps if "image" in step]
        assert [view["src"] for view in views] == [f"images/{SHA}.png", None]
        assert views[1]["problem"] == "run/none.png: no such file"
        with urllib.request.urlopen(server.url + views[0]["src"]) as response:
            assert response.read() == CHART
            assert response.headers["Content-Type"] == "image/png"
            assert "img-src 'self'" in response.headers["Content-Security-Policy"]
        for route in (f"images/{'0' * 64}.png", f"images/{SHA}.svg", "images/../run.yaml", f"images/{SHA.upper()}.png"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(server.url + route)
            assert refused.value.code == 404, route
    finally:
        server.close()


def test_the_static_viewer_copies_the_image_beside_its_page(mini, vision_run):
    out = mini.root / "site"
    assert main(["view", str(vision_run.run_dir), "--static", str(out)]) == 0
    assert (out / "images" / f"{SHA}.png").read_bytes() == CHART
    assert sorted(path.name for path in (out / "images").iterdir()) == [f"{SHA}.png"]


def test_inspect_export_carries_the_image_as_content_image(mini, vision_run):
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ChatMessageTool, ContentImage

    out = mini.root / "inspect"
    assert main(["export", "inspect", str(vision_run.run_dir), str(out)]) == 0
    [sample] = read_eval_log(str(out / "run.eval"), resolve_attachments=True).samples
    tools = [message for message in sample.messages if isinstance(message, ChatMessageTool)]
    viewed = [message for message in tools if message.function == "view_image"]
    assert len(viewed) == 2
    images = [part for part in viewed[0].content if isinstance(part, ContentImage)]
    assert [part.image for part in images] == [f"data:image/png;base64,{base64.b64encode(CHART).decode()}"]
    assert isinstance(viewed[1].content, str) and "no such file" in viewed[1].content


def test_replay_gives_the_image_back(mini, vision_run):
    assert main(["replay", str(vision_run.run_dir)]) == 0, mini.capsys.readouterr().out
    [replayed] = [path for path in (vision_run.run_dir / "replays").iterdir() if ".replay-" in path.name]
    assert (replayed / "images" / f"{SHA}.png").read_bytes() == CHART
    lines = (replayed / "episodes" / "mini" / "t1.jsonl").read_text().splitlines()
    views = [event for event in map(json.loads, lines) if event["event"] == "image_view"]
    assert [view.get("image", {}).get("sha256") for view in views] == [SHA, None]


def test_replay_tells_a_different_image(mini, vision_run):
    """The logged command that wrote the chart now writes another one: the replay sees another image."""
    log = vision_run.run_dir / "episodes" / "mini" / "t1.jsonl"
    changed = base64.b64encode(png(24, 16, "red")).decode()
    log.write_text(log.read_text().replace(base64.b64encode(CHART).decode(), changed))
    assert main(["replay", str(vision_run.run_dir)]) == 1
    output = mini.capsys.readouterr().out
    assert "differs mini/t1: image view 1: was" in output


def test_a_script_that_looks_without_vision_is_refused_in_one_line(mini):
    script = mini.script([WRITE, {"view_image": "run/chart.png"}, "<answer>42</answer>"])
    outcome = mini.run("--model", script)
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    [line] = outcome.output.strip().splitlines()
    assert line.endswith(": item 2: 'view_image' calls the agent's view_image tool: run with --vision")
