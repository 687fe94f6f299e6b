"""Flattening a nested state dict into dotted keys, as torch's DCP does: mappings are always
walked; a list is walked only when it holds (at any depth) a tensor or a mapping, otherwise
it is one value; tuples and everything else are leaves."""
from collections.abc import Mapping

import ptcore


def _is_leaf(value):
    if isinstance(value, Mapping):
        return False
    if not isinstance(value, list):
        return True
    for entry in value:
        if isinstance(entry, ptcore.Tensor):
            return False
        if isinstance(entry, Mapping):
            return False
        if isinstance(entry, list) and not _is_leaf(entry):
            return False
    return True


def flatten(state_dict):
    """``(flat, paths)``: ``flat`` maps the dotted key to each leaf value (in traversal
    order), ``paths`` the dotted key to the tuple of keys/indices that reaches it."""
    flat, paths = {}, {}

    def visit(path, value):
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit(path + (str(k),), v)
        elif _is_leaf(value):
            key = ".".join(map(str, path))
            if key in flat:
                raise ValueError(f"duplicate flattened key {key!r} in the state dict")
            flat[key], paths[key] = value, path
        else:
            for i, v in enumerate(value):
                visit(path + (i,), v)

    for k, v in state_dict.items():
        visit((str(k),), v)
    return flat, paths


def set_element(root, path, value):
    """Replace the value at ``path`` (as :func:`flatten` gives) in the nested ``root``."""
    container = root
    for step in path[:-1]:
        container = _child(container, step)
    last = path[-1]
    if isinstance(container, Mapping):
        container[_key_in(container, last)] = value
    else:
        container[last] = value


def _key_in(mapping, key):
    # flattening turned keys into strings; find the original (e.g. an int key)
    if key in mapping:
        return key
    for k in mapping:
        if str(k) == key:
            return k
    return key


def _child(container, step):
    if isinstance(container, Mapping):
        return container[_key_in(container, step)]
    return container[step]
