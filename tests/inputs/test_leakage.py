"""The pre-run leakage check: golds, solutions and ids printed in a task's collection, and the allow-list."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.inputs import leakage_cache, leakage_prefilter
from harness.inputs.collections.hashing import collection_files
from harness.inputs.leakage import LeakHit, Needles, _collection_leaks, find_leaks
from harness.inputs.leakage_cache import find_leaks_cached
from harness.inputs.tasks import Task, collection_of, load_task_file
from tests.conftest import REPO


def task(**fields):
    return Task(**({"id": "q-17", "domain": "d", "question": "Q?", "answer": "42"} | fields))


def test_a_gold_printed_as_a_whole_word_is_a_leak_but_not_inside_another_number(tmp_path: Path):
    (tmp_path / "a.md").write_text("The answer is 42.\n")
    (tmp_path / "b.md").write_text("1425 and 4.2 and 14.745,42 and 42.5\n")
    hits = find_leaks([task()], {"d": tmp_path})
    assert [(hit.what, hit.document) for hit in hits] == [("gold", "a.md")]


def test_the_solution_and_the_task_id_are_leaks_and_leak_allow_allows_the_gold_only(tmp_path: Path):
    (tmp_path / "a.md").write_text("see q-17: 42; run `grep 42 a.md`\n")
    hits = find_leaks([task(solution="grep 42 a.md", leak_allow="a quoted figure")], {"d": tmp_path})
    assert {(hit.what, hit.allowed) for hit in hits} == {("gold", "a quoted figure"), ("solution", None), ("id", None)}


def leaky_project(mini, allow=None):
    row = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "40"} | ({"leak_allow": allow} if allow else {})
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(row) + "\n")


def check(mini):
    return main(["leakage", "--tasks-dir", str(mini.tasks_dir), "--collections-dir", str(mini.root / "collections")])


def test_leakage_command_lists_hits_and_exits_1(mini):
    leaky_project(mini)  # the mini collection's ledger prints 40
    assert check(mini) == 1
    assert "mini/t1: gold printed in ledger.md" in mini.capsys.readouterr().out
    leaky_project(mini, allow="the 2020 figure is a lookup")
    assert check(mini) == 0
    assert "(allowed: the 2020 figure is a lookup)" in mini.capsys.readouterr().out


def test_the_count_is_of_tasks_not_of_the_documents_they_leak_in(mini):
    leaky_project(mini)
    (mini.root / "collections" / "mini" / "copy.md").write_text("2020: 40 units\n")
    assert check(mini) == 1
    assert "1 tasks checked: 1 with a leak (2 in documents), 0 allowed" in mini.capsys.readouterr().out


def test_page_images_are_not_read_as_text(findocmre_project: Path, capsys):
    """A choice gold `D` is in many a PNG's bytes; a picture prints nothing a reader would take for it."""
    folders = ["--tasks-dir", str(findocmre_project / "tasks"), "--collections-dir"]
    code = main(["leakage", *folders, str(findocmre_project / "collections")])
    output = capsys.readouterr().out
    assert ".png" not in output and ".images/" not in output
    assert code == 0 and "tasks checked: 0 with a leak" in output, output


def test_a_run_reads_no_binary_file_as_text_at_its_start(mini):
    leaky_project(mini)
    (mini.root / "collections" / "mini" / "ledger.md").write_text("no figures here\n")
    (mini.root / "collections" / "mini" / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\r 40 \xff\0")
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]))
    assert outcome.exit_code == 0 and "leakage check" not in outcome.output


def test_a_run_warns_at_its_start_about_leaking_tasks(mini):
    leaky_project(mini)
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]))
    assert outcome.exit_code == 0
    assert "warning: leakage check: 1 tasks have their gold, solution or id printed in their collection (mini/t1)" in (
        outcome.output
    )


def test_an_empty_leak_allow_reason_is_refused(mini):
    leaky_project(mini, allow=" ")
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 2 and "mini.jsonl:1: field 'leak_allow'" in outcome.output
    assert not outcome.run_dir.exists()


@pytest.mark.parametrize(
    ("text", "gold", "printed"),
    [
        ("a 42 b", "42", True),
        ("1425", "42", False),
        ("x 4.2 y", "4.2", True),
        ("1,42", "42", False),
        ("42.5", "42", False),
        ("42.", "42", True),
        ("-42", "42", True),
        ("(42)", "42", True),
        ("b42", "42", False),
        ("42b", "42", False),
        ("4.2", "42", False),
        ("total 1,234.5 EUR", "1,234.5", True),
    ],
)
def test_a_gold_counts_as_printed_only_as_a_whole_number(text: str, gold: str, printed: bool):
    assert old_printed(gold, text, whole_word=True) is printed
    assert bool(Needles([task(answer=gold, id="no such id")]).printed_in(text)) is printed


def test_starts_share_one_scan_across_results_folders_and_rescan_only_changed_content(mini, monkeypatch):
    scans = []
    scan = leakage_cache._scan
    monkeypatch.setattr(leakage_cache, "_scan", lambda *arguments: scans.append(1) or scan(*arguments))
    leaky_project(mini)
    ledger = mini.root / "collections" / "mini" / "ledger.md"
    original = ledger.read_text()
    warning = "leakage check: 1 tasks have their gold, solution or id printed in their collection (mini/t1)"
    for run_id, *where in (("first",), ("second",), ("elsewhere", "--results-dir", str(mini.root / "other"))):
        outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), *where, run_id=run_id)
        assert outcome.exit_code == 0 and warning in outcome.output, outcome.output
    assert len(scans) == 1  # the later runs, in this results folder or another, read the first one's scan
    ledger.write_text("| year | units |\n| 2020 | 41 |\n")
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), run_id="changed")
    assert len(scans) == 2 and "leakage check" not in outcome.output  # a changed document is scanned again
    ledger.write_text(original)  # content scanned before: known by its hash
    leaky_project(mini, allow="a lookup")  # the allowance changes the warning, not what the scan looks for
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), run_id="allowed")
    assert len(scans) == 2 and "leakage check" not in outcome.output


# The scan as it was before one Aho-Corasick pass replaced it (a regex per task, needle and document): the
# reference the new scan must agree with, hit for hit and in the same order.
def old_domain_leaks(domain: str, folder: Path, tasks: list[Task]) -> list[LeakHit]:
    hits: list[LeakHit] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        document = str(path.relative_to(folder))
        for one in tasks:
            for what, needle in (("gold", one.answer), ("solution", one.solution), ("id", one.id)):
                if needle and old_printed(needle, text, whole_word=what != "solution"):
                    allowed = one.leak_allow if what == "gold" else None
                    hits.append(LeakHit(one.domain, one.id, what, document, allowed))  # a hit names its task's domain
    return hits


def old_printed(needle: str, text: str, whole_word: bool) -> bool:
    if not whole_word:
        return needle.strip() in text
    needle = re.escape(needle.strip())
    return re.search(rf"{needle}(?<![\w.,]{needle})(?![\w]|[.,]\d)", text) is not None


def starter_domains() -> dict[str, tuple[Path, list[Task]]]:
    found = {}
    for file in sorted((REPO / "tasks").glob("*.jsonl")):
        for one in load_task_file(file):
            folder = REPO / "collections" / collection_of(one)
            found.setdefault(collection_of(one), (folder, []))[1].append(one)
    return found


@pytest.mark.parametrize("domain", sorted(starter_domains()))
def test_the_scan_finds_what_the_regex_scan_found_in_the_starter_collections(domain: str):
    folder, tasks = starter_domains()[domain]
    assert _collection_leaks(folder, tasks) == old_domain_leaks(domain, folder, tasks)
    # The starter tasks barely leak, so also needles cut from the documents themselves: whole numbers and words,
    # parts of numbers (digits of a longer number, a figure's decimals), the text around a table cell.
    texts = [path.read_text() for path in sorted(folder.rglob("*")) if path.is_file()]
    rng = random.Random(domain)
    cut = []
    for index in range(120):
        text = rng.choice(texts)
        tokens = re.findall(r"[-+]?\d[\d,.]*%?|\w+", text) or ["x"]
        start = rng.randrange(len(text))
        pieces = [rng.choice(tokens), rng.choice(tokens)[1:], text[start : start + rng.randint(1, 12)]]
        gold, solution, id_ = (rng.choice(pieces) for _ in range(3))
        cut.append(task(id=id_, answer=gold, solution=solution, leak_allow="cut" if index % 3 else None))
    tasks = tasks + cut
    new, old = _collection_leaks(folder, tasks), old_domain_leaks(domain, folder, tasks)
    assert new == old and len(old) > 100


ADVERSARIAL = {
    "start.md": "42 at the start",
    "end.md": "at the end 42",
    "only.md": "42",
    "empty.md": "",
    "longer.md": "1425 142 4200 42000 0.42 42.0 1,42 42,5 4,200",
    "comma.md": "the figure 1,42 and 42,5 and 42, then 42.",
    "overlap.md": "4242 42424 1,2,3 aa-aaa-a q-17q-17 1.2.3",
    "signs.md": "-42 +42 (42) [42] 42% 42 % $42 42x x42 _42 42_",
    "unicode.md": "é42 42é ٤٢ 42٤ 42\u00a0 \u00a042 ２42",
    "lines.md": "\n42\n4\n2\r\n42\r\n",
    "tabs.md": "\t42\t 42 \t",
    "nested/deeper.md": "grep 42 a.md | 42 q-17 x",
}
NEEDLES = [
    "42",
    " 42 ",
    "4242",
    "424",
    "242",
    "2",
    "1,2",
    "2,3",
    "1,2,3",
    "2.3",
    "aa",
    "aa-a",
    "a-aa",
    "q-17",
    "q-17q",
    "-42",
    "+42",
    "42%",
    "42 %",
    "$42",
    "(42)",
    "grep 42 a.md",
    "42 q-17",
    "é42",
    "٤٢",
    "42\u00a0",
    "4\n2",
    "42\r\n",
    "42,",
    "42.",
    ".42",
    ",42",
    "x",
    "_42",
    "\t42",
]


def adversarial_tasks(rng: random.Random, count: int) -> list[Task]:
    picked = []
    for index in range(count):  # shared needles, a gold that is another's id, a solution holding a gold
        gold, solution, id_ = (rng.choice(NEEDLES) for _ in range(3))
        allow = "ok" if index % 2 else None
        picked.append(
            task(
                id=id_ if index % 4 else f"t-{index}",
                answer=gold,
                solution=solution if index % 5 else None,
                leak_allow=allow,
            )
        )
    return picked


def test_the_scan_finds_what_the_regex_scan_found_in_adversarial_texts(tmp_path: Path):
    for name, text in ADVERSARIAL.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(text.encode())
    rng = random.Random(23)
    for _ in range(20):
        tasks = adversarial_tasks(rng, rng.randint(1, 30))
        assert _collection_leaks(tmp_path, tasks) == old_domain_leaks("d", tmp_path, tasks)
    every = [task(id=f"g-{i}", answer=needle, solution=needle) for i, needle in enumerate(NEEDLES)]
    hits = _collection_leaks(tmp_path, every)
    assert hits == old_domain_leaks("d", tmp_path, every)
    assert ("gold", "start.md") in {(hit.what, hit.document) for hit in hits if hit.task_id == "g-0"}
    assert ("gold", "end.md") in {(hit.what, hit.document) for hit in hits if hit.task_id == "g-0"}
    assert ("gold", "longer.md") not in {(hit.what, hit.document) for hit in hits if hit.task_id == "g-0"}


def test_a_blank_needle_is_printed_where_the_regex_found_it(tmp_path: Path):
    # load_task_file refuses blank fields; a Task built in code may still have them
    for name, text in {"a.md": "", "b.md": "x", "c.md": "é.", "d.md": " 1"}.items():
        (tmp_path / name).write_text(text)
    tasks = [task(id="b", answer=" ", solution="\t"), task(id="c", answer="42", solution=" ")]
    assert _collection_leaks(tmp_path, tasks) == old_domain_leaks("d", tmp_path, tasks)


def test_the_scan_finds_what_the_regex_found_in_random_texts():
    rng = random.Random(5)
    alphabet = "42.,- a_\n\u00e9"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        needles = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 6))]
        tasks = [
            task(id=f"{rng.choice(needles)}", answer=rng.choice(needles), solution=rng.choice([*needles, None]))
            for _ in range(rng.randint(1, 4))
        ]
        expected = [
            (one, what)
            for one in tasks
            for what, needle in (("gold", one.answer), ("solution", one.solution), ("id", one.id))
            if needle and old_printed(needle, text, whole_word=what != "solution")
        ]
        assert Needles(tasks).printed_in(text) == expected, (text, tasks)


def test_the_cached_scan_gives_the_scan_s_hits_and_reads_them_back(tmp_path: Path, monkeypatch):
    folder, tasks = starter_domains()["demo"]
    golds = ["2020", "1", "%", "|", "year", "0.5"]
    cut = [task(id=f"c-{i}", domain="demo", answer=gold) for i, gold in enumerate(golds)]
    tasks = tasks + cut
    expected = old_domain_leaks("demo", folder, tasks)
    cache = tmp_path / "cache"
    files = {"demo": collection_files(folder, cache)}
    assert find_leaks_cached(tasks, files, cache) == expected
    monkeypatch.setattr(leakage_cache, "_scan", lambda *arguments: pytest.fail("scanned again"))
    assert find_leaks_cached(tasks, files, cache) == expected
    assert find_leaks_cached(tasks[::3], files, cache) == old_domain_leaks("demo", folder, tasks[::3])  # a shard


def test_the_cache_scans_only_new_tasks_and_changed_documents(tmp_path: Path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in {"a.md": "| 2020 | 17.5 |", "b.md": "total 99", "c.md": "total 99"}.items():
        (folder / name).write_text(text + "\n")
    cache = tmp_path / "cache"
    first = [task(id="t1", domain="d", answer="17.5"), task(id="t2", domain="d", answer="99")]
    assert [
        (h.task_id, h.document) for h in find_leaks_cached(first, {"d": collection_files(folder, cache)}, cache)
    ] == [("t1", "a.md"), ("t2", "b.md"), ("t2", "c.md")]
    scans: list[tuple[set[str], list[str]]] = []
    real_scan = leakage_cache._scan

    def counted(files, documents, tasks):
        scans.append((set(documents), [one.id for one in tasks]))
        return real_scan(files, documents, tasks)

    monkeypatch.setattr(leakage_cache, "_scan", counted)
    second = [*first, task(id="t3", domain="d", answer="2020")]
    hits = find_leaks_cached(second, {"d": collection_files(folder, cache)}, cache)
    assert [(h.task_id, h.document) for h in hits] == [("t1", "a.md"), ("t3", "a.md"), ("t2", "b.md"), ("t2", "c.md")]
    assert [tasks for _, tasks in scans] == [["t3"]]  # the new task alone, over each distinct content once
    assert len(scans[0][0]) == 2
    scans.clear()
    (folder / "b.md").write_text("nothing here\n")
    hits = find_leaks_cached(second, {"d": collection_files(folder, cache)}, cache)
    assert [(h.task_id, h.document) for h in hits] == [("t1", "a.md"), ("t3", "a.md"), ("t2", "c.md")]
    assert [(len(documents), tasks) for documents, tasks in scans] == [(1, ["t1", "t2", "t3"])]


def test_the_collection_hash_rehashes_only_changed_files(tmp_path: Path, monkeypatch):
    from harness.inputs.collections import hashing

    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.md", "sub/b.md", "sub/c.md"):
        (folder / name).write_text(name + "\n")
    cache = tmp_path / "cache"
    cold = hashing.collection_hash(folder, cache)
    assert cold == hashing.collection_hash(folder) and cold.startswith("sha256-tree:")
    read: list[str] = []
    real = hashing.file_sha256
    monkeypatch.setattr(hashing, "file_sha256", lambda path: read.append(path.name) or real(path))
    assert hashing.collection_hash(folder, cache) == cold and read == []
    (folder / "sub" / "b.md").write_text("changed\n")
    changed = hashing.collection_hash(folder, cache)
    assert changed != cold and read == ["b.md"] and changed == hashing.collection_hash(folder)
    (folder / "a.md").unlink()
    assert hashing.collection_hash(folder, cache) == hashing.collection_hash(folder) != changed


def test_a_run_recorded_with_the_legacy_hash_resumes_on_the_same_collection(mini):
    from harness.inputs.collections.hashing import legacy_collection_hash

    outcome = mini.run("--model", "oracle")
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    record["collections"]["mini"]["hash"] = legacy_collection_hash(mini.root / "collections" / "mini")
    (outcome.run_dir / "run.yaml").write_text(yaml.safe_dump(record))
    assert mini.run("--model", "oracle").exit_code == 0
    (mini.root / "collections" / "mini" / "ledger.md").write_text("changed\n")
    (outcome.run_dir / "run.yaml").write_text(yaml.safe_dump(record))
    changed = mini.run("--model", "oracle")
    assert changed.exit_code == 2 and "collection mini sha256:" in changed.output


def test_a_large_scan_spread_over_processes_finds_what_one_pass_finds(tmp_path: Path, monkeypatch):
    folder, tasks = starter_domains()["law"]
    monkeypatch.setattr(leakage_cache, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(leakage_cache.os, "cpu_count", lambda: 2)
    cut = [task(id=f"c-{i}", domain="law", answer=gold) for i, gold in enumerate(["2020", "1", "%", "0.5"])]
    expected = old_domain_leaks("law", folder, tasks + cut)
    cache = tmp_path / "cache"
    assert find_leaks_cached(tasks + cut, {"law": collection_files(folder, cache)}, cache) == expected


def test_the_ripgrep_prefilter_keeps_every_file_the_exact_scan_finds_something_in(tmp_path: Path, monkeypatch):
    folder = tmp_path / "docs"
    (folder / ".hidden").mkdir(parents=True)
    (folder / ".gitignore").write_text("*.md\n")  # ripgrep would skip ignored files on its own
    (folder / ".ignore").write_text("*\n")
    (folder / ".hidden" / "a.md").write_text("total 17.5\n")
    (folder / "bom.md").write_bytes(b"\xef\xbb\xbfvalue 99\n")
    (folder / "utf16.md").write_bytes("value 99\n".encode("utf-16"))  # ripgrep would transcode it
    (folder / "binary.md").write_bytes(b"\x00\x01 17.5 \xff\xfe\n")
    (folder / "two-lines.md").write_text("for f in *.md; do\n  grep x $f\ndone\n")
    (folder / "invalid.md").write_bytes(b"\xe2" + "17.5 and \u00e9 99".encode())
    (tmp_path / "elsewhere.md").write_text("99 linked\n")
    (folder / "link.md").symlink_to(tmp_path / "elsewhere.md")
    (folder / "none.md").write_text("nothing\n")
    tasks = [
        task(id="t1", domain="d", answer="17.5"),
        task(id="t2", domain="d", answer="99"),
        task(id="t3", domain="d", answer="5", solution="for f in *.md; do\n  grep x $f\ndone"),
    ]
    expected = old_domain_leaks("d", folder, tasks)
    assert {hit.document for hit in expected} >= {".hidden/a.md", "bom.md", "binary.md", "two-lines.md", "link.md"}
    cache = tmp_path / "cache"
    assert find_leaks_cached(tasks, {"d": collection_files(folder, cache)}, cache) == expected
    listed = leakage_prefilter.files_printing_any(folder, tasks)
    assert listed is not None and "none.md" not in listed
    monkeypatch.setattr(leakage_prefilter.shutil, "which", lambda name: None)  # no ripgrep: every file scanned
    assert leakage_prefilter.files_printing_any(folder, tasks) is None
    assert find_leaks_cached(tasks, {"d": collection_files(folder, tmp_path / "cold")}, tmp_path / "cold") == expected
