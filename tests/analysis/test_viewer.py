"""The viewer served on loopback (and as static files), driven in headless Chromium."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from harness.cli.main import main
from harness.records.events import AgentTranscriptEvent
from harness.records.trajectory import event_line, read_jsonl
from tests.analysis.test_report_and_viewer import run_all, two_domain_project
from tests.helpers.browser import headless_chromium, search, static_server, viewer_page

# Markup that ends or hides a <script> element, HTML entities, JavaScript line breaks and rich markup, and
# markup that would run script if it were ever parsed as HTML.
HOSTILE = "<!--<script>x</script>&amp;\u2028\u2029[/x]"
RUNS_SCRIPT = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def two_runs(mini):
    """Two runs of three tasks: one all correct, one wrong on mini/t1 (and m1: gold 7)."""
    two_domain_project(mini)
    first = run_all(mini, [{"bash": "echo first-run-output"}, "<answer>42</answer>"], "first")
    second = run_all(mini, [{"bash": "echo second-run-output"}, "<answer>41</answer>"], "second")
    return first.run_dir, second.run_dir


def test_viewer_lists_filters_and_opens_an_episode(mini):
    first, second = two_runs(mini)
    with viewer_page([first, second]) as page:
        assert page.locator("tr.episode").count() == 6
        page.select_option("#filter-domain", "misc")
        assert page.locator("tr.episode").count() == 2
        page.select_option("#filter-domain", "all")
        page.select_option("#filter-verdict", "correct")
        assert page.locator("tr.episode").count() == 2  # first run's mini tasks; misc's gold is 7
        page.locator('tr.episode[data-key="mini/t2"]').first.click()
        step = page.locator(".step").first
        assert "echo first-run-output" in step.locator("pre.command").inner_text()
        assert "first-run-output" in step.locator("pre.stdout").inner_text()
        assert "exit code 0" in step.inner_text() and "turns and" in step.inner_text()
        assert "Q2?" in page.locator("#main").inner_text()
        assert "time: model" in page.locator(".timing-total").inner_text()
        assert page.locator(".step .timing").count() == 2


def test_viewer_searches_outputs_and_filters_by_run(mini):
    first, second = two_runs(mini)
    with viewer_page([first, second]) as page:
        search(page, "SECOND-run-output", 3)
        assert page.locator("tr.episode").count() == 3
        search(page, "")
        page.select_option("#filter-run", index=1)
        assert page.locator("tr.episode").count() == 3


def test_a_late_answer_to_an_older_search_does_not_replace_a_newer_one(mini):
    first, second = two_runs(mini)
    with viewer_page([first, second]) as page:
        held = []
        page.route("**/search?q=*", lambda route: held.append(route))  # the answer to the first search is held
        search(page, "second-run-output")
        while not held:
            page.wait_for_timeout(20)
        search(page, "")
        assert page.locator("tr.episode").count() == 6
        held[0].continue_()
        page.wait_for_timeout(500)
        assert page.locator("tr.episode").count() == 6
        assert "search" not in page.locator("#count").inner_text()


def test_task_by_model_grid_opens_the_episodes_side_by_side(mini):
    first, second = two_runs(mini)
    with viewer_page([first, second]) as page:
        page.click("#tab-grid")
        assert page.locator("#grid-head th").count() == 3  # task + two runs
        row = page.locator('tr.task[data-key="mini/t1"]')
        assert [row.locator("td").nth(n).inner_text() for n in (1, 2)] == ["correct", "wrong_value"]
        assert page.locator("td.cell.correct").count() == 2
        row.click()
        panes = page.locator("#main .pane")
        panes.nth(1).wait_for()
        assert panes.count() == 2
        assert "first-run-output" in panes.nth(0).locator("pre.stdout").inner_text()
        assert "second-run-output" in panes.nth(1).locator("pre.stdout").inner_text()


def test_viewer_shows_hostile_text_literally_and_runs_none_of_it(mini):
    # a run refuses a domain that is not a plain name and a task id with line breaks, so the hostile domain and
    # task id are written into the log below, as a hand-edited or foreign log could hold them
    domain, task_id = "d" + HOSTILE, "t" + HOSTILE
    task = {"id": "t-plain", "domain": "plain", "question": "Q " + HOSTILE, "answer": "42"}
    (mini.tasks_dir / "plain.jsonl").write_text(json.dumps(task) + "\n")
    (mini.root / "collections" / "plain").mkdir()
    command = f"echo '{HOSTILE}'; echo '{RUNS_SCRIPT}' >&2"
    replies = [{"text": "R " + RUNS_SCRIPT, "bash": command}, f"<answer>42 {HOSTILE}</answer>"]
    outcome = mini.run("--model", mini.script(replies), "--domain", "plain")
    assert outcome.exit_code == 0, outcome.output
    trajectory = next((outcome.run_dir / "episodes").glob("*/*.jsonl"))
    events = read_jsonl(trajectory)
    events[-1]["detail"] = "D " + HOSTILE  # no scripted ending writes free text here; the viewer shows any
    events[0]["domain"] = events[-1]["domain"] = domain
    events[0]["task_id"] = events[-1]["task_id"] = task_id
    trajectory.write_text("".join(json.dumps(event) + "\n" for event in events))
    rows = read_jsonl(outcome.run_dir / "results.jsonl")
    rows[0]["domain"], rows[0]["task_id"] = domain, task_id
    (outcome.run_dir / "results.jsonl").write_text(json.dumps(rows[0]) + "\n")
    moved = outcome.run_dir / "episodes" / "x" / "y.jsonl"
    moved.parent.mkdir()
    trajectory.rename(moved)  # a log with no row of its own is listed as unfinished from its first line
    with viewer_page([outcome.run_dir]) as page:
        cells = page.locator("tr.episode td")
        assert (cells.nth(1).text_content(), cells.nth(2).text_content()) == (domain, task_id)
        page.locator("tr.episode").click()
        page.locator(".step").first.wait_for()
        main_text = page.locator("#main").text_content()
        for shown in (f"{domain} / {task_id}", "Q " + HOSTILE, f"answer 42 {HOSTILE}", f"(D {HOSTILE})"):
            assert shown in main_text
        step = page.locator(".step").first
        assert step.locator("pre.model-text").text_content() == "R " + RUNS_SCRIPT
        assert step.locator("pre.command").text_content() == command
        assert step.locator("pre.stdout").text_content() == HOSTILE + "\n"
        assert step.locator("pre.stderr").text_content() == RUNS_SCRIPT + "\n"
        assert page.evaluate("window.pwned") is None
        assert page.locator("#main img, #main script").count() == 0


def with_transcript(trajectory, transcript) -> None:
    """TRAJECTORY with an installed agent's own transcript logged before its row, as the solver logs it."""
    *events, end = trajectory.read_text().splitlines(keepends=True)
    event = AgentTranscriptEvent(agent="mini-swe-agent", version="2.4.6", transcript=transcript)
    trajectory.write_text("".join(events) + event_line(event.kind, **event.to_dict()) + end)


def test_an_agents_own_transcript_is_folded_in_its_episode_literally_and_bounded(mini):
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--epochs", "2")
    command = f"echo '{HOSTILE}'"
    reply = {"role": "assistant", "content": "R " + RUNS_SCRIPT, "extra": {"actions": [{"command": command}]}}
    messages = [{"role": "user\u202e" + RUNS_SCRIPT, "content": "x" * 10_000_000}, reply]
    episodes = outcome.run_dir / "episodes" / "mini"
    with_transcript(episodes / "t1.jsonl", {"messages": messages, "trajectory_format": "mini-swe-agent-1.1"})
    with_transcript(episodes / "t1~epoch2.jsonl", '{"messages": [' + RUNS_SCRIPT)  # the file cut short
    with viewer_page([outcome.run_dir]) as page:
        page.click("#tab-grid")
        page.locator('tr.task[data-key="mini/t1"]').click()
        page.locator("#main .pane").nth(1).wait_for()
        read, raw = (page.locator("#main .pane").nth(n).locator("details.transcript") for n in (0, 1))
        read.locator("summary").click()
        summary = "mini-swe-agent 2.4.6 · its own transcript (mini-swe-agent-1.1) · 2 messages"
        assert read.locator("summary").text_content() == summary
        first, second = (read.locator(".transcript-message").nth(n) for n in (0, 1))
        assert first.locator("h3").text_content() == "user\\u202e" + RUNS_SCRIPT  # a bidi override: shown, not obeyed
        assert first.locator("pre").text_content().endswith("… 9,980,000 more characters")
        assert second.locator("pre.transcript-text").text_content() == "R " + RUNS_SCRIPT
        assert second.locator("pre.transcript-command").text_content() == "$ " + command
        raw.locator("summary").click()
        assert "shown raw (not JSON: the file as the agent left it)" in raw.locator("summary").text_content()
        assert raw.locator("pre.transcript-raw").text_content() == '{"messages": [' + RUNS_SCRIPT
        assert page.evaluate("window.pwned") is None
        assert page.locator("#main img, #main script").count() == 0


def test_static_copy_hosted_by_a_plain_web_server(mini, tmp_path):
    first, second = two_runs(mini)
    out = tmp_path / "site"
    assert main(["view", str(first), str(second), "--static", str(out)]) == 0
    assert sorted(p.name for p in (out / "episodes").iterdir()) == [f"{n}.json" for n in range(6)]
    with static_server(out) as url, headless_chromium() as browser:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("tr.episode").count() == 6
        search(page, "second-run-output", 3)
        page.locator("tr.episode").first.click()
        assert "second-run-output" in page.locator(".step pre.stdout").first.inner_text()


def test_server_answers_only_under_its_token(mini):
    from harness.analysis.viewer_server import ViewerServer
    from harness.analysis.viewer_site import ViewerSite

    first, _ = two_runs(mini)
    server = ViewerServer(ViewerSite([first]))
    try:
        base = server.url.rsplit("/", 2)[0]
        with urllib.request.urlopen(server.url + "index.json") as response:
            assert len(json.loads(response.read())["episodes"]) == 3
        token = server.token
        refused = (
            "/",
            "/index.json",
            "/episodes/0.json",
            f"/{token}/../run.yaml",
            f"/{token}/episodes/99.json",
            f"/{token}/run.yaml",
            "/wrong-token/index.json",
        )
        for path in refused:
            try:
                urllib.request.urlopen(base + path)
                raise AssertionError(f"{path} was served")
            except urllib.error.HTTPError as error:
                assert error.code == 404, path
    finally:
        server.close()


def test_view_of_a_folder_that_is_no_run_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["view", str(tmp_path), "--static", str(tmp_path / "site")]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()


def test_the_grid_counts_the_epochs_of_a_task_and_opens_them_all(mini):
    two_domain_project(mini)
    replies = [{"bash": "echo epoch-output"}, "<answer>42</answer>"]
    outcome = mini.run("--model", mini.script(replies), "--domain", "mini,misc", "--epochs", "2", run_id="epochs")
    assert outcome.exit_code == 0, outcome.output
    with viewer_page([outcome.run_dir]) as page:
        assert page.locator("tr.episode").count() == 6
        page.click("#tab-grid")
        assert page.locator('tr.task[data-key="mini/t1"] td').nth(1).inner_text() == "2/2 correct"
        assert page.locator('tr.task[data-key="misc/m1"] td').nth(1).inner_text() == "0/2 correct"
        page.locator('tr.task[data-key="mini/t1"]').click()
        page.locator("#main .pane").nth(1).wait_for()
        assert [page.locator("#main .pane .run").nth(n).inner_text().endswith(f"epoch {n + 1}") for n in (0, 1)] == [
            True,
            True,
        ]


def test_view_serves_until_ctrl_c_then_exits_cleanly(mini):
    import signal
    import subprocess
    import sys

    first, _ = two_runs(mini)
    served = subprocess.Popen(
        [sys.executable, "-u", "-m", "harness", "view", str(first)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert served.stdout is not None
        url = served.stdout.readline().split()[2]
        with urllib.request.urlopen(url + "index.json") as response:
            assert len(json.loads(response.read())["episodes"]) == 3
        served.send_signal(signal.SIGINT)
        assert served.wait(timeout=30) == 0
        assert "Traceback" not in (served.stderr.read() if served.stderr else "")
    finally:
        served.kill()


def test_a_ctrl_c_that_comes_while_the_url_is_being_printed_stops_the_viewer_cleanly(mini, monkeypatch):
    """A reader of the URL may send Ctrl-C before the print has returned (a loaded CI machine did)."""
    from rich.console import Console

    first, _ = two_runs(mini)
    printed = Console.print

    def print_then_interrupted(console, *objects, **options):
        printed(console, *objects, **options)
        if str(objects[0]).startswith("viewer at "):
            raise KeyboardInterrupt

    monkeypatch.setattr(Console, "print", print_then_interrupted)
    try:
        code: int | str = main(["view", str(first)])
    except KeyboardInterrupt:
        code = "the interrupt escaped"
    assert code == 0
