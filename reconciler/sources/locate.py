"""Find the line and column of a field path inside a YAML document.

Positions are computed only for documents that have problems: the fast path never builds node
trees. A path that leaves the document (a missing field) resolves to the deepest node that
exists, which is where the fix goes.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from reconciler.sources.yamlio import compose_documents


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based
    block_scalar: bool = False  # a `|` or `>` value starts on the next line


def _position(node: yaml.Node) -> Position:
    block = isinstance(node, yaml.ScalarNode) and node.style in ("|", ">")
    return Position(node.start_mark.line + 1, node.start_mark.column + 1, block)


def _child(node: yaml.Node, part: str | int, want_key: bool) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                return key_node if want_key else value_node
    elif (isinstance(node, yaml.SequenceNode) and isinstance(part, int)
          and 0 <= part < len(node.value)):
        child: yaml.Node = node.value[part]
        return child
    return None


def locate_in_tree(
    root: yaml.Node, path: tuple[str | int, ...], at_key: bool = False
) -> tuple[Position, int]:
    """Position of ``path`` under ``root`` and how many path parts were found."""
    node = root
    found = 0
    for index, part in enumerate(path):
        last = index == len(path) - 1
        child = _child(node, part, want_key=at_key and last)
        if child is None:
            break
        node = child
        found += 1
    return _position(node), found


class Locator:
    """Caches the node trees of the files it was asked about."""

    def __init__(self) -> None:
        self._trees: dict[str, list[yaml.Node | None]] = {}

    def tree(self, file: str, text: str, document: int) -> yaml.Node | None:
        if file not in self._trees:
            try:
                self._trees[file] = compose_documents(text)
            except yaml.YAMLError:
                self._trees[file] = []
        trees = self._trees[file]
        return trees[document] if 0 <= document < len(trees) else None

    def locate(
        self, file: str, text: str, document: int, path: tuple[str | int, ...],
        at_key: bool = False,
    ) -> tuple[Position | None, int]:
        root = self.tree(file, text, document)
        if root is None:
            return None, 0
        return locate_in_tree(root, path, at_key)
