"""The viewer at 1280×800 in Chromium with four runs over nine domains: the episode list shows without
scrolling past the run header (folded in a <details>), task ids on one line, no sideways scroll, long labels
shortened with the full text on hover, the list sortable by any column."""

from __future__ import annotations

import json
from pathlib import Path

from harness.analysis.viewer_server import ViewerServer
from harness.analysis.viewer_site import ViewerSite
from tests.helpers.browser import headless_chromium

DOMAINS = ("agri", "arch", "biz", "edu", "fin", "health", "law", "tech", "demo")
LONG_LABEL = "hosted_vllm/Qwen2.5-Coder-32B-Instruct-AWQ at temperature 0.7 with a long protocol note"


def four_runs_over_nine_domains(mini) -> list[Path]:
    """Nine domains of two tasks each, run by four scripted models (one of them under a long label)."""
    for domain in DOMAINS:
        tasks = [{"id": f"{domain}-00{i}", "domain": domain, "question": f"Q {i}?", "answer": "42"} for i in (1, 2)]
        (mini.tasks_dir / f"{domain}.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
        (mini.root / "collections" / domain).mkdir(exist_ok=True)
        (mini.root / "collections" / domain / "a.md").write_text("forty-two\n")
    runs = []
    for number, answer in enumerate(("42", "41", "42", "7")):
        label = ["--label", LONG_LABEL] if number == 0 else []
        replies = [{"bash": "ls /workspace/documents"}, f"<answer>{answer}</answer>"]
        outcome = mini.run(
            "--model",
            mini.script(replies),
            "--domain",
            ",".join(DOMAINS),
            "--workers",
            "4",
            *label,
            run_id=f"r{number}",
        )
        assert outcome.exit_code == 0, outcome.output
        runs.append(outcome.run_dir)
    return runs


def open_viewer(browser, runs: list[Path], url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    return page


def test_the_episode_list_shows_above_the_fold_at_1280_by_800(mini, tmp_path):
    runs = four_runs_over_nine_domains(mini)
    server = ViewerServer(ViewerSite(runs))
    try:
        with headless_chromium() as browser:
            page = open_viewer(browser, runs, server.url)
            assert page.locator("tr.episode").count() == 4 * 9 * 2
            first = page.locator("tr.episode").first.bounding_box()
            assert first is not None and first["y"] + first["height"] <= 800  # no scrolling past the header
            assert page.locator("#runs").get_attribute("open") is None  # the header is folded
            side = page.evaluate(
                "() => { const s = document.getElementById('side'); return [s.scrollWidth, s.clientWidth]; }"
            )
            assert side[0] <= side[1]  # no sideways scroll
            heights = page.evaluate("() => [...document.querySelectorAll('tr.episode')].map(r => r.offsetHeight)")
            assert max(heights) == min(heights), heights  # no task id broken over two lines
            label_cell = page.locator(f'tr.episode td.label[title="{LONG_LABEL}"]').first
            assert label_cell.text_content() == "hosted…otocol note"  # its start and end, whole on hover
            page.screenshot(path=str(tmp_path / "viewer-list.png"))
            page.screenshot(path="/tmp/h-sweeps-viewer-list.png")
            tasks = lambda: [  # noqa: E731
                page.locator("tr.episode").nth(n).locator("td").nth(2).text_content() for n in range(3)
            ]
            assert tasks() == ["agri-001"] * 3  # by domain, task, run and epoch at first
            page.locator("#list-head th[title^=task]").click()
            page.locator("#list-head th[title^=task]").click()
            assert tasks() == ["tech-002"] * 3  # the task column, descending
            page.locator("#runs summary").click()
            assert page.locator("#header .protocol").count() == 4
    finally:
        server.close()


def test_labels_that_differ_at_their_end_stay_apart_and_side_by_side_panes_never_overlap(mini, tmp_path):
    mini.task_copies(1)
    document = "quarterly_statement_" * 8 + ".md"  # a name without a space, in both episodes' touched files
    (mini.root / "collections" / "mini" / document).write_text("units 40\n")
    runs = []
    for label in ("ollama/gemma3:4b-it-qat seed100", "ollama/gemma3:4b-it-qat seed1"):
        replies = [{"bash": f"cat /workspace/documents/{document}"}, "<answer>42</answer>"]
        outcome = mini.run("--model", mini.script(replies), "--label", label, run_id=label.split()[-1])
        assert outcome.exit_code == 0, outcome.output
        runs.append(outcome.run_dir)
    server = ViewerServer(ViewerSite(runs))
    try:
        with headless_chromium() as browser:
            page = open_viewer(browser, runs, server.url)
            shown = page.evaluate(
                "() => [...document.querySelectorAll('tr.episode td:first-child')]"
                ".map(td => [td.innerText, td.scrollWidth <= td.clientWidth])"
            )
            assert sorted(text.endswith(" seed1") for text, _ in shown) == [False, True], shown  # told apart
            assert any(text.endswith(" seed100") for text, _ in shown), shown
            assert all(fits for _, fits in shown), shown  # wrapped if need be, never clipped
            page.locator("#tab-grid").click()
            headers = page.evaluate(
                "() => [...document.querySelectorAll('#grid-head th')].slice(1)"
                ".map(th => [th.innerText.replace(/\\n/g, ''), th.scrollWidth <= th.clientWidth])"
            )
            assert sorted(text for text, _ in headers) == sorted(text for text, _ in shown), headers
            assert all(fits for _, fits in headers), headers
            page.locator("tr.task").first.click()
            page.wait_for_selector("#main .pane >> nth=1")
            boxes = page.evaluate(
                "() => [...document.querySelectorAll('#main .pane')].map(p => { const r = p.getBoundingClientRect();"
                " return [r.left, r.right, p.scrollWidth <= p.clientWidth]; })"
            )
            page.screenshot(path=str(tmp_path / "side-by-side.png"))
            assert len(boxes) == 2 and boxes[0][1] <= boxes[1][0], boxes  # side by side, apart
            assert all(fits for _, _, fits in boxes), boxes  # nothing drawn past a pane's edge
    finally:
        server.close()


def test_two_runs_of_one_label_read_apart_and_an_episode_has_its_own_address(mini):
    runs = []
    for run_id in ("first", "second"):  # one model twice: the same label
        outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--label", "gpt-x", run_id=run_id)
        assert outcome.exit_code == 0, outcome.output
        runs.append(outcome.run_dir)
    server = ViewerServer(ViewerSite(runs))
    try:
        with headless_chromium() as browser:
            page = open_viewer(browser, runs, server.url)
            shown = page.evaluate(
                "() => [...document.querySelectorAll('tr.episode td:first-child')].map(td => td.title)"
            )
            assert sorted(shown) == ["gpt-x · first", "gpt-x · second"]
            page.locator("tr.episode td[title='gpt-x · second']").click()
            page.wait_for_selector("#main .pane")
            address = page.url
            assert address.endswith("#run=second&task=mini%2Ft1&epoch=1")
            opened = open_viewer(browser, runs, address)  # the address alone opens that episode
            assert opened.locator("#main .pane .meta.run").text_content() == "gpt-x · second · epoch 1"
            assert opened.locator("tr.episode.selected td").first.get_attribute("title") == "gpt-x · second"
    finally:
        server.close()
