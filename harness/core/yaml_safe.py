"""The one way harness reads and writes YAML. Reading: safe types only, and no aliases (`*name`, `<<: *name`)
in what a user gives: a file of nested aliases (a "billion laughs") grows without bound once anything walks
it, so it is refused at its first alias. Our own records (run.yaml, sweep.yaml) were written with aliases by
older versions: there aliases are read, up to a bounded size once expanded. Writing: never an alias."""

from __future__ import annotations

from typing import Any

import yaml

from harness.core.errors import yaml_input_error

_MAX_EXPANDED_NODES = 100_000
"""A record's size with every alias expanded: far above any run.yaml, far below a bomb."""


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"aliases are not allowed (found *{event.anchor})", event.start_mark
            )
        return super().compose_node(parent, index)


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def load_yaml(text: str, path: object) -> Any:
    """TEXT (read from PATH) as Python values; bad YAML or an alias is an `InputError` naming file and line."""
    try:
        return yaml.load(text, Loader=_NoAliasLoader)
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None


def compose_yaml(text: str, path: object) -> yaml.Node | None:
    """TEXT's node tree (for line numbers), under the same rules as `load_yaml`."""
    try:
        return yaml.compose(text, Loader=_NoAliasLoader)
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None


def load_record(text: str, path: object) -> Any:
    """A record harness wrote (run.yaml, sweep.yaml): aliases allowed while the expanded tree stays small."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is None:
            return None
        if _expanded_size(node, {}) > _MAX_EXPANDED_NODES:
            raise yaml_input_error(path, ValueError(f"more than {_MAX_EXPANDED_NODES} values once aliases expand"))
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None


def _expanded_size(node: yaml.Node, known: dict[int, int]) -> int:
    """Nodes in NODE's tree with aliases expanded, each shared node counted once per use (memoised, so a bomb
    is measured without being walked)."""
    if id(node) not in known:
        known[id(node)] = 0  # a recursive alias counts as nothing more
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [item for pair in node.value for item in pair]
        known[id(node)] = 1 + sum(_expanded_size(child, known) for child in children)
    return known[id(node)]


def dump_yaml(data: Any) -> str:
    """DATA as block YAML in key order, Unicode as is, without anchors even where one object appears twice."""
    return yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True)
