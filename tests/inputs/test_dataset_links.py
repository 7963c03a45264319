"""A dataset's links never bring the user's own files into the sandbox: a collection or task file that leads
out of its folder is refused unless --follow-links says otherwise; a link inside a collection that leads out
of it is refused always; run.yaml records where the collection was and its tree's digest (issue 37, class 4)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from harness.sandboxes.base import SandboxSettings
from tests.inputs.test_bad_input import assert_rejected

SECRET = "sk-planted-0123456789"
READ_SECRET = [{"bash": "cat documents/id_key documents/.ssh/id_key 2>&1; ls -la documents"}, "<answer>42</answer>"]


def plant_home(mini):
    """A stand-in home holding a fake key: where a dataset's link would lead."""
    home = mini.root / "home" / "someone"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_key").write_text(SECRET + "\n")
    return home


def link_collection_to(mini, target):
    collection = mini.root / "collections" / "mini"
    for document in collection.iterdir():
        shutil.copy(document, target)
    shutil.rmtree(collection)
    collection.symlink_to(target)
    return collection


def test_a_collection_folder_linked_out_of_the_collections_folder_is_refused(mini):
    """`collections/mini -> ~someone` was mounted by its target: the key came back in the trajectory."""
    collection = link_collection_to(mini, plant_home(mini))
    outcome = mini.run("--model", mini.script(READ_SECRET))
    assert_rejected(outcome, str(collection), "outside", "--follow-links")
    assert SECRET not in outcome.output


def test_with_follow_links_the_linked_collection_is_used_and_its_target_recorded(mini):
    home = plant_home(mini)
    link_collection_to(mini, home)
    outcome = mini.run("--model", mini.script(READ_SECRET), "--follow-links")
    [row] = outcome.rows
    assert row["status"] == "answered", row["detail"]
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    collection = record["collections"]["mini"]
    assert collection["resolved"] == str(home.resolve())
    assert collection["path"] == str(mini.root / "collections" / "mini")
    assert collection["hash"].startswith("sha256-tree:")
    assert record["config"]["follow_links"] is True


def test_a_run_without_links_records_no_resolved_path_and_no_flag(mini):
    outcome = mini.run("--model", "oracle")
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert set(record["collections"]["mini"]) == {"path", "hash"}
    assert "follow_links" not in record["config"]


def test_a_task_file_linked_out_of_the_tasks_folder_is_refused(mini):
    elsewhere = mini.root / "elsewhere.jsonl"
    tasks = mini.tasks_dir / "mini.jsonl"
    tasks.rename(elsewhere)
    tasks.symlink_to(elsewhere)
    assert_rejected(mini.run("--model", "oracle"), str(tasks), "outside", "--follow-links")
    followed = mini.run("--model", "oracle", "--follow-links")
    assert [row["verdict"] for row in followed.rows] == ["correct"], followed.output


def test_a_link_inside_a_collection_to_a_file_outside_is_refused_even_when_following_links(mini):
    """A bind mount would resolve it inside the sandbox, but the collection's hash (and a copying backend) read
    the file it names: never the sandbox's, so never used."""
    home = plant_home(mini)
    link = mini.root / "collections" / "mini" / "id_key"
    link.symlink_to(home / ".ssh" / "id_key")
    for flags in ([], ["--follow-links"]):
        outcome = mini.run("--model", mini.script(READ_SECRET), *flags)
        assert_rejected(outcome, str(link), "outside the collection")
        assert SECRET not in outcome.output


def test_a_linked_folder_inside_a_collection_leading_out_is_refused(mini):
    (mini.root / "collections" / "mini" / ".ssh").symlink_to(plant_home(mini) / ".ssh")
    assert_rejected(mini.run("--model", mini.script(READ_SECRET)), ".ssh", "outside the collection")


def test_a_link_inside_a_collection_to_its_own_file_is_kept(mini):
    (mini.root / "collections" / "mini" / "same-ledger.md").symlink_to("ledger.md")
    outcome = mini.run("--model", mini.script([{"bash": "cat documents/same-ledger.md"}, "<answer>42</answer>"]))
    [observed] = [e for e in outcome.trajectory("t1") if e["event"] == "observation"]
    assert "| 2020 | 40 |" in observed["stdout"]


def test_the_recorded_digest_changes_when_a_document_changes(mini):
    def digest(run_id):
        outcome = mini.run("--model", "oracle", run_id=run_id)
        return yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["collections"]["mini"]["hash"]

    before = digest("before")
    assert digest("again") == before
    (mini.root / "collections" / "mini" / "decoy.md").write_text("changed\n")
    assert digest("after") != before


@pytest.mark.parametrize("make_sandbox", ["local", "docker"], indirect=True)
def test_a_bind_mounted_collection_does_not_follow_its_links_to_the_host(collection, make_sandbox, tmp_path):
    """The second line behind the refusal: the backends that bind the collection resolve a link inside it in
    the sandbox's own tree, where the host's file is not (E2B refuses every link when it builds)."""
    secret = tmp_path / "home" / "id_key"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    (collection / "id_key").symlink_to(secret)
    box = make_sandbox(collection, "links", SandboxSettings())
    box.start()
    try:
        result = box.execute("cat documents/id_key", 30)
    finally:
        box.close()
    assert result.exit_code != 0 and SECRET not in result.stdout + result.stderr
