"""What a check may trust: PyTorch's own types, read through PyTorch's own descriptors.

A check reads a learner's tensors, modules and optimizers. Their answers (a tensor's `.device`, a module's
`.parameters()`, an optimizer's `.state`) come from whatever class the object has, so a class the notebook
wrote can say anything: a `torch.Tensor` subclass whose `device` property returns the device it was asked for
passes a check without moving a byte. `untrusted()` lists what would make a verdict worthless:

- a subclass of `torch.Tensor` that is not PyTorch's (or this package's) own;
- a subclass of `nn.Module` or `torch.optim.Optimizer` written outside an installed library (in the notebook)
  that redefines what the checks read (`parameters`, `buffers`, `state_dict`, `state`, ...);
- PyTorch's own `Tensor`, `Module` or `Optimizer` with one of those attributes replaced since this module was
  imported.

With no such class in the process, every tensor a check reads is one of PyTorch's own classes, whose `.device`,
`.dtype` and `.shape` are `torch._C.TensorBase`'s descriptors; an assignment to `torch.Tensor` that shadows one
of them is the third case.
"""

from __future__ import annotations

import os
import sys
import types
import weakref

import torch
from torch import nn

_TENSOR_BASE = torch._C.TensorBase
_TENSOR_NAMES = ("device", "is_meta", "is_cuda", "dtype", "shape", "size", "data", "to", "cpu", "cuda", "type",
                 "__class__", "__getattribute__", "__getattr__", "__torch_function__", "__torch_dispatch__", "numel")
# What the checks *read* of a module or an optimizer. What they only call to act (`to`, `_apply`, `load_state_dict`,
# `step`) a learner may override to good effect (an `_apply` that also moves a plain tensor): the checks then read
# the result through the names below.
_MODULE_NAMES = ("parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                 "modules", "named_modules", "state_dict", "__getattr__", "__getattribute__", "__class__")
_OPTIMIZER_NAMES = ("state", "param_groups", "state_dict", "__getattr__", "__getattribute__", "__class__")
_WATCHED = ((torch.Tensor, _TENSOR_NAMES), (nn.Module, _MODULE_NAMES), (torch.optim.Optimizer, _OPTIMIZER_NAMES))
# PyTorch's own attributes as they were when the checks were loaded.
_ORIGINAL = {(base, name): base.__dict__.get(name) for base, names in _WATCHED for name in names}
_OWN_FOLDERS = tuple(os.path.realpath(os.path.dirname(m.__file__)) + os.sep for m in (torch, sys.modules[__package__]))


def _defined_in(cls: type, folders: tuple[str, ...]) -> bool:
    """Whether a class is one that a module inside `folders` defines: found there under its name, or made inside a
    function there (`<locals>`) from code there, without redefining what the checks read."""
    module = sys.modules.get(getattr(cls, "__module__", "") or "")
    path = getattr(module, "__file__", None) or ""
    if not isinstance(module, types.ModuleType) or not os.path.realpath(path).startswith(folders):
        return False
    found: object = module
    for part in getattr(cls, "__qualname__", "").split("."):
        found = getattr(found, part, None)
    if found is cls:
        return True
    codes = [getattr(getattr(v, "fget", v), "__code__", None) for v in vars(cls).values()]
    return ("<locals>" in getattr(cls, "__qualname__", "") and not set(vars(cls)) & set(_TENSOR_NAMES)
            and all(os.path.realpath(c.co_filename).startswith(folders) for c in codes if c is not None))


def _written_in_a_notebook(cls: type) -> bool:
    """A class from the notebook: module `__main__`, or a method compiled from no file on disk."""
    if getattr(cls, "__module__", None) == "__main__":
        return True
    for value in vars(cls).values():
        function = getattr(value, "fget", value)
        code = getattr(getattr(function, "__func__", function), "__code__", None)
        if code is not None and not os.path.isfile(code.co_filename):
            return True
    return False


def _subclasses(base: type) -> list[type]:
    seen: dict[int, type] = {}
    todo = list(type.__subclasses__(base))
    while todo:
        cls = todo.pop()
        if id(cls) not in seen:
            seen[id(cls)] = cls
            todo.extend(type.__subclasses__(cls))
    return list(seen.values())


def _name(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}".removeprefix("__main__.")


# A class's verdict, once read (classes are checked each time a check runs; their bodies do not change).
_VERDICTS: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def _verdict(cls: type, base: type, names: tuple[str, ...]) -> str:
    """Why `cls` (a subclass of `base`) cannot be trusted, or ""."""
    if cls not in _VERDICTS:
        if base is _TENSOR_BASE:
            bad = cls is not torch.Tensor and not _defined_in(cls, _OWN_FOLDERS)
            _VERDICTS[cls] = f"a tensor class of its own: {_name(cls)}" if bad else ""
        else:
            redefined = sorted(set(vars(cls)) & set(names))
            bad = bool(redefined) and _written_in_a_notebook(cls)
            _VERDICTS[cls] = f"{_name(cls)} redefines {', '.join(redefined)}" if bad else ""
    return _VERDICTS[cls]


def untrusted() -> list[str]:
    """What in this process a check cannot trust (see the module's docstring); empty when all is PyTorch's own."""
    found = []
    for (base, name), original in _ORIGINAL.items():
        if base.__dict__.get(name) is not original:
            found.append(f"torch's own {base.__name__}.{name} was replaced")
    for base, names in ((_TENSOR_BASE, _TENSOR_NAMES), *_WATCHED[1:]):
        found += [why for cls in _subclasses(base) if (why := _verdict(cls, base, names))]
    return found
