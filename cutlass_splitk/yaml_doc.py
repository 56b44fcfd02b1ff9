"""YAML with line numbers: plain Python values plus the source line of every field path, and
:class:`ConfigError`, the located error every config problem is reported as
(``file:line: field.path[i]: message``).

Nothing here knows the config schema (see config.py).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import yaml


class ConfigError(ValueError):
    """A config problem, located: ``file:line: field: message``."""

    def __init__(self, file: str, line: Optional[int], field: str, message: str):
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


# --- YAML with line numbers -----------------------------------------------------------------

FieldPath = Tuple[Union[str, int], ...]
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def field_path(path: FieldPath) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class Doc:
    """Plain Python values plus the source line of every path."""

    def __init__(self, file: str):
        self.file = file
        self.lines: Dict[FieldPath, int] = {}
        self._memo: Dict[int, Tuple[Any, FieldPath]] = {}
        self.aliases: Dict[FieldPath, FieldPath] = {}  # a path reached through an alias -> the anchor's path

    def line(self, path: FieldPath) -> Optional[int]:
        """The line of ``path``, or of its nearest ancestor that has one. A path through an
        alias is translated to the anchored node's own path, where the value is written."""
        for _ in range(64):
            for cut in range(len(path), -1, -1):
                prefix = path[:cut]
                if prefix in self.aliases:
                    path = self.aliases[prefix] + path[cut:]
                    break
                if prefix in self.lines:
                    return self.lines[prefix]
            else:
                return None
        return None

    def error(self, path: FieldPath, message: str) -> ConfigError:
        return ConfigError(self.file, self.line(path), field_path(path), message)

    def scalar(self, node: yaml.ScalarNode, path: FieldPath) -> Any:
        """A scalar's value; a malformed explicitly tagged scalar (``!!int abc``) is a
        ConfigError, not whatever exception the YAML constructor raises."""
        try:
            return yaml.SafeLoader("").construct_object(node)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, AttributeError, OverflowError, IndexError, KeyError):
            raise ConfigError(self.file, node.start_mark.line + 1, field_path(path),
                              f"invalid {node.tag.rsplit(':', 1)[-1]} scalar {node.value!r}") from None

    def convert(self, node: yaml.Node, path: FieldPath, depth: int = 0) -> Any:
        """Plain values for ``node``. A node reached again through an alias is converted once
        (memoised by identity): aliases cannot blow up into exponential work, and a merged
        mapping is flattened only once."""
        key = id(node)
        if key in self._memo:
            value, first = self._memo[key]
            if first != path:
                self.aliases.setdefault(path, first)
            return value
        self.lines.setdefault(path, node.start_mark.line + 1)
        if depth > 64:
            raise ConfigError(self.file, node.start_mark.line + 1, field_path(path), "nesting deeper than 64 levels")
        value = self._convert(node, path, depth)
        self._memo[key] = (value, path)
        return value

    def _convert(self, node: yaml.Node, path: FieldPath, depth: int) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        if node.tag not in (_SEQ_TAG, _MAP_TAG):
            raise ConfigError(self.file, node.start_mark.line + 1, field_path(path),
                              f"unsupported tag {node.tag!r}: use plain YAML mappings and lists")
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            seen: Dict[str, int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _MERGE_TAG:
                    continue
                key = self.key(key_node, path)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise ConfigError(self.file, line, field_path(path + (key,)),
                                      f"duplicate key (first defined on line {seen[key]})")
                seen[key] = line
            loader = yaml.SafeLoader("")
            try:
                loader.flatten_mapping(node)  # resolves '<<' merge keys
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None) or node.start_mark
                raise ConfigError(self.file, mark.line + 1, field_path(path),
                                  f"invalid merge: {getattr(exc, 'problem', None) or exc}") from None
            out: Dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.key(key_node, path)
                self.lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.convert(value_node, path + (key,), depth + 1)
            return out
        raise ConfigError(self.file, node.start_mark.line + 1, field_path(path), "unsupported YAML node")

    def key(self, key_node: yaml.Node, path: FieldPath) -> str:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ConfigError(self.file, key_node.start_mark.line + 1, field_path(path),
                              "mapping keys must be plain strings")
        key = self.scalar(key_node, path)
        if not isinstance(key, str):
            raise ConfigError(self.file, key_node.start_mark.line + 1, field_path(path),
                              f"mapping keys must be strings, got {type(key).__name__} {key!r}")
        return key


def parse(text: str, file: str) -> Tuple[Any, Doc]:
    """The document's plain values and its line map. Raises :class:`ConfigError`."""
    doc = Doc(file)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(file, line, "", f"invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, None, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(file, None, "", "invalid YAML: nesting too deep") from None
    if node is None:
        raise ConfigError(file, 1, "", "empty file: expected a mapping with an 'ops' key")
    try:
        return doc.convert(node, ()), doc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(file, mark.line + 1 if mark else None, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError(file, None, "", "invalid YAML: nesting too deep") from None
