"""Lone surrogates made printable before a file's values or positions are built.

JSON may escape half of a surrogate pair (`"\\ud800"`), and PyYAML's pure-Python loader lets such an
escape through; such text can be neither printed nor written to a report. The data gets U+FFFD
(as runner.util.jsontext.replace_lone_surrogates makes it), and the text composed for positions gets
escapes libyaml accepts, so keys read by both parsers stay equal.
"""
from __future__ import annotations

import re

import yaml

from ..util.jsontext import without_lone_surrogates

# A surrogate escape in JSON text, not itself escaped (`\\ud800` is a backslash and text): a high
# surrogate with the low one that may follow it, or a lone low one.
_JSON_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\u(d[89ab][0-9a-f]{2})(?:\\u(d[c-f][0-9a-f]{2}))?"
                             r"|(?<!\\)((?:\\\\)*)\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def yaml_surrogate_escapes(text: str) -> str:
    """JSON text whose surrogate escapes libyaml accepts, for computing positions: a pair becomes one
    `\\U` escape of the character it encodes, a lone surrogate `\\ufffd` (as `replace_lone_surrogates`
    makes it in the data), so keys read by both parsers stay equal. Columns after a pair on its line
    move two to the left."""
    def replace(match: re.Match) -> str:
        if match.group(2) is None:  # a lone low surrogate
            return match.group(4) + "\\ufffd"
        if match.group(3) is None:  # a lone high surrogate
            return match.group(1) + "\\ufffd"
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        return match.group(1) + f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}"

    return _JSON_SURROGATE.sub(replace, text)


def replace_lone_surrogates_in_nodes(root: yaml.Node) -> None:
    """Replace lone surrogates in every scalar of the node tree (keys too) before values are built, so
    that data, positions and messages all hold the same printable text."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # aliases share nodes
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            node.value = without_lone_surrogates(node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
