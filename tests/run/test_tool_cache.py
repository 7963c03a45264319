"""The tools found in a sandbox build, kept in the user's cache: trusted only for that exact build and tool
list, and anything else there is a miss (the start probes again)."""

from __future__ import annotations

import json

from harness.run.sandboxing import tool_cache
from harness.run.sandboxing.tool_cache import known_tools, remember_tools
from harness.sandboxes.tools import tools

IMAGE = "docker image sha256:" + "a" * 64
OTHER = "docker image sha256:" + "b" * 64


def every_tool() -> dict[str, str]:
    return {tool.command: f"/usr/bin/{tool.command}" for tool in tools()}


def test_the_tools_found_in_a_build_are_known_for_that_build_alone(tmp_path):
    remember_tools(tmp_path, IMAGE, every_tool())
    assert known_tools(tmp_path, IMAGE) == every_tool()
    assert known_tools(tmp_path, OTHER) is None
    entry = tool_cache._entry(tmp_path, IMAGE)
    tool_cache._entry(tmp_path, OTHER).write_bytes(entry.read_bytes())  # an entry under another build's name
    assert known_tools(tmp_path, OTHER) is None


def test_an_unreadable_old_or_partial_entry_is_a_miss(tmp_path):
    remember_tools(tmp_path, IMAGE, every_tool())
    entry = tool_cache._entry(tmp_path, IMAGE)
    data = json.loads(entry.read_text())
    for broken in ("{", json.dumps(data | {"version": 0}), json.dumps(data | {"tools": {"rg": 1}}), "[]"):
        entry.write_text(broken)
        assert known_tools(tmp_path, IMAGE) is None
    short = every_tool()
    short.pop("rg")
    remember_tools(tmp_path, IMAGE, short)  # a probe that missed a tool is no answer for the next start
    assert known_tools(tmp_path, IMAGE) is None


def test_another_tool_list_asks_the_build_again(tmp_path, monkeypatch):
    remember_tools(tmp_path, IMAGE, every_tool())
    monkeypatch.setattr(tool_cache, "probe_command", lambda: "command -v newtool")
    assert known_tools(tmp_path, IMAGE) is None
