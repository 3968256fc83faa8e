"""Finding tensors by qualified name: in a module (at any depth, in containers), a batch, an argument list."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn

# Containers deeper than this are not walked (a guard against odd self-referencing structures).
MAX_DEPTH = 8
# What every nn.Module keeps in its __dict__ (hooks, the registries of parameters, buffers, submodules).
MODULE_INTERNALS = frozenset(nn.Module().__dict__) | {"training"}


def _is_namedtuple(value: object) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def walk_value(value: object, name: str, seen: set[int], depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Tensors and modules inside `value` (a tensor, or nested lists, tuples, dicts, namedtuples, dataclasses).

    Yields (qualified name, tensor or module); `seen` holds the ids already listed, so nothing comes twice.
    """
    if isinstance(value, torch.Tensor):
        if id(value) not in seen:
            seen.add(id(value))
            yield name, value
        return
    if isinstance(value, nn.Module):
        yield name, value
        return
    if depth >= MAX_DEPTH or isinstance(value, (str, bytes)) or id(value) in seen:
        return
    if _is_namedtuple(value):
        seen.add(id(value))
        for field in value._fields:
            yield from walk_value(getattr(value, field), f"{name}.{field}", seen, depth + 1)
    elif isinstance(value, (list, tuple)):
        seen.add(id(value))
        for index, item in enumerate(value):
            yield from walk_value(item, f"{name}[{index}]", seen, depth + 1)
    elif isinstance(value, Mapping):
        seen.add(id(value))
        for key, item in value.items():
            yield from walk_value(item, f"{name}[{key!r}]", seen, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        seen.add(id(value))
        for field in dataclasses.fields(value):
            yield from walk_value(getattr(value, field.name), f"{name}.{field.name}", seen, depth + 1)


def walk_tensors(value: object, name: str, seen: set[int]) -> Iterator[tuple[str, torch.Tensor]]:
    """The tensors inside `value`, by name, including the parameters and buffers of modules found in it."""
    for found_name, found in walk_value(value, name, seen):
        if isinstance(found, torch.Tensor):
            yield found_name, found
        elif id(found) not in seen:
            seen.add(id(found))
            held = (*found.named_parameters(prefix=found_name), *found.named_buffers(prefix=found_name))
            for qualified, tensor in held:
                if id(tensor) not in seen:
                    seen.add(id(tensor))
                    yield qualified, tensor


def module_tensors(
    module: nn.Module,
    prefix: str,
    seen: set[int],
    registered: set[int] | frozenset[int],
    listed: set[int] | None = None,
) -> Iterator[tuple[str, str, torch.Tensor]]:
    """(name, kind, tensor) for a module's own parameters, buffers and plain tensor attributes.

    Attributes are walked into lists, tuples and dicts. A module found there that is not in `registered`
    (a plain list of layers, which `.to()` does not move) is walked too, its tensors listed as attributes.
    Parameters and buffers already in `listed` (default: `seen`) are not listed again; a caller that puts
    the model's parameters and buffers in `seen` beforehand keeps attributes that hold them off the list.
    """
    listed = seen if listed is None else listed
    dot = prefix + "." if prefix else ""
    for kind, store in (("parameter", module._parameters), ("buffer", module._buffers)):
        for name, tensor in store.items():
            if tensor is not None and id(tensor) not in listed:
                listed.add(id(tensor))
                seen.add(id(tensor))
                yield dot + name, kind, tensor
    for attribute, value in vars(module).items():
        if attribute in MODULE_INTERNALS or value is None or isinstance(value, (str, int, float, bool)):
            continue
        for name, found in walk_value(value, dot + attribute, seen):
            if isinstance(found, torch.Tensor):
                yield name, "attribute", found
            elif id(found) not in registered and id(found) not in seen:
                for qualified, inner in found.named_modules(prefix=name):
                    if id(inner) in registered or id(inner) in seen:
                        continue
                    seen.add(id(inner))
                    for tensor_name, _, tensor in module_tensors(inner, qualified, seen, registered, listed):
                        yield tensor_name, "attribute", tensor
