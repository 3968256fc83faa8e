"""Answers learners might write for lab 04: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "04-batches"

COPY_CELL = '''\
pageable = torch.randn(1024, 1024)  # an ordinary CPU tensor
on_device = pageable.to(device, non_blocking=True)
'''

ANSWERS = [
    # --- exercise 1: to_device ---------------------------------------------------------------------------
    Answer("ex1", "wrong: the blog post's helper (tuples come back as lists, non-tensors raise)", '''\
def to_device(data, device):
    if isinstance(data, (list, tuple)):
        return [to_device(x, device) for x in data]
    elif isinstance(data, dict):
        return {k: to_device(v, device) for k, v in data.items()}
    else:
        return data.to(device, non_blocking=True)
''', "incorrect"),
    Answer("ex1", "wrong: moves the top level of a dict only", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: value.to(device) if torch.is_tensor(value) else value for key, value in batch.items()}
    return batch
''', "incorrect"),
    Answer("ex1", "wrong: moves to the notebook's global `device`, not its argument", '''\
def to_device(batch, dev):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {key: to_device(value, dev) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, dev) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, dev) for item in batch)
    return batch
''', "incorrect"),
    Answer("ex1", "wrong: drops what is not a tensor", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items() if isinstance(v, (torch.Tensor, dict, list, tuple))}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(x, device) for x in batch if isinstance(x, (torch.Tensor, dict, list, tuple)))
    return batch
''', "incorrect"),
    Answer("ex1", "wrong: turns numbers into tensors", '''\
def to_device(batch, device):
    if isinstance(batch, (torch.Tensor, int, float)):
        return torch.as_tensor(batch).to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch
''', "incorrect"),
    Answer("ex1", "wrong: rebuilds a namedtuple without unpacking its items (raises)", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch
''', "incorrect", key="ch04.ex1.namedtuple_raised"),
    Answer("ex1", "wrong: every Sequence is walked into, strings too (a RecursionError)", '''\
from collections.abc import Mapping, Sequence


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, Mapping):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*[to_device(item, device) for item in batch])
    if isinstance(batch, Sequence):
        return type(batch)([to_device(item, device) for item in batch])
    return batch
''', "incorrect", key="ch04.ex1.string_recursion"),
    Answer("ex1", "wrong: strings listed among the containers (a RecursionError)", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple, str)):
        items = [to_device(item, device) for item in batch]
        return "".join(items) if isinstance(batch, str) else type(batch)(items)
    return batch
''', "incorrect", key="ch04.ex1.string_recursion"),
    Answer("ex1", "wrong: right shape, but the copies block (no non_blocking=True, which the exercise asks for)",
           '''\
from torch.utils._pytree import tree_map


def to_device(batch, device):
    return tree_map(lambda x: x.to(device) if isinstance(x, torch.Tensor) else x, batch)
''', "incorrect", key="ch04.ex1.blocking"),
    Answer("ex1", "wrong: a namedtuple comes back as a plain tuple", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(to_device(item, device) for item in batch)
    if isinstance(batch, list):
        return [to_device(item, device) for item in batch]
    return batch
''', "incorrect"),
    Answer("ex1", "wrong: new zero tensors of the right shape on the device, without the values", '''\
from torch.utils._pytree import tree_map


def to_device(batch, device):
    return tree_map(lambda x: torch.zeros_like(x, device=device) if isinstance(x, torch.Tensor) else x, batch)
''', "incorrect"),
    Answer("ex1", "wrong: casts every tensor to float (the labels too)", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, torch.float32)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch
''', "incorrect"),
    Answer("ex1", "hostile: always raises", '''\
def to_device(batch, device):
    raise NotImplementedError("later")
''', "incorrect"),
    Answer("ex1", "hostile: returns junk", '''\
def to_device(batch, device):
    return "moved"
''', "incorrect"),
    Answer("ex1", "hostile: loops forever", '''\
def to_device(batch, device):
    while True:
        pass
''', "incorrect", loops=True),
    Answer("ex1", "hostile: not a function", '''\
to_device = {"device": "cuda"}
''', "incorrect"),
    Answer("ex1", "right: an empty tensor on the device, filled by a copy that does not block", '''\
def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return torch.empty_like(batch, device=device).copy_(batch, non_blocking=True)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return batch._make(to_device(item, device) for item in batch)
    if isinstance(batch, (list, tuple)):
        return type(batch)(map(lambda item: to_device(item, device), batch))
    return batch
''', "correct"),
    Answer("ex1", "right: torch.utils._pytree.tree_map", '''\
from torch.utils._pytree import tree_map


def to_device(batch, device):
    """Move every tensor in a (nested) batch to `device`; keep the containers as they are."""
    return tree_map(lambda x: x.to(device, non_blocking=True) if isinstance(x, torch.Tensor) else x, batch)
''', "correct"),
    Answer("ex1", "right: functools.singledispatch", '''\
import functools


@functools.singledispatch
def to_device(batch, device):
    return batch  # numbers, strings, None


@to_device.register
def _(batch: torch.Tensor, device):
    return batch.to(device, non_blocking=True)


@to_device.register
def _(batch: dict, device):
    return {key: to_device(value, device) for key, value in batch.items()}


@to_device.register
def _(batch: list, device):
    return [to_device(item, device) for item in batch]


@to_device.register
def _(batch: tuple, device):
    items = [to_device(item, device) for item in batch]
    return batch._make(items) if hasattr(batch, "_fields") else tuple(items)
''', "correct"),
    Answer("ex1", "wrong: separate branches, a dict built in a loop, the copies block", '''\
def to_device(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device)
    elif isinstance(batch, dict):
        moved = {}
        for key in batch:
            moved[key] = to_device(batch[key], device)
        return moved
    elif isinstance(batch, list):
        return [to_device(item, device) for item in batch]
    elif isinstance(batch, tuple):
        items = [to_device(item, device) for item in batch]
        if hasattr(batch, "_fields"):
            return type(batch)(*items)
        return tuple(items)
    else:
        return batch
''', "incorrect", key="ch04.ex1.blocking"),
    Answer("ex1", "right: separate branches, a dict built in a loop, keyword arguments to .to()", '''\
def to_device(batch, device):
    if torch.is_tensor(batch):
        return batch.to(device=device, non_blocking=True)
    elif isinstance(batch, dict):
        moved = {}
        for key in batch:
            moved[key] = to_device(batch[key], device)
        return moved
    elif isinstance(batch, list):
        return [to_device(item, device) for item in batch]
    elif isinstance(batch, tuple):
        items = [to_device(item, device) for item in batch]
        if hasattr(batch, "_fields"):
            return type(batch)(*items)
        return tuple(items)
    else:
        return batch
''', "correct"),
    # --- exercise 2: DeviceLoader ------------------------------------------------------------------------
    Answer("ex2", "wrong: caches the batches of the first pass", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device
        self.batches = None

    def __iter__(self):
        if self.batches is None:
            self.batches = [to_device(batch, self.device) for batch in self.loader]
        return iter(self.batches)

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "wrong: uses the blog post's helper from section 4 instead of the learner's own", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for batch in self.loader:
            yield blog_to_device(batch, self.device)

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "wrong: an endless __iter__ (starts over forever)", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        while True:
            for batch in self.loader:
                yield to_device(batch, self.device)

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "wrong: a generator function (no len(), one pass only)", '''\
def DeviceLoader(loader, device):
    for batch in loader:
        yield to_device(batch, device)
''', "incorrect"),
    Answer("ex2", "wrong: unpacks (inputs, labels) and moves the inputs only", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for inputs, labels in self.loader:
            yield [inputs.to(self.device), labels]

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "wrong: moves to the notebook's global `device`", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader

    def __iter__(self):
        for batch in self.loader:
            yield to_device(batch, device)

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "wrong: wraps the notebook's global `loader`, not its argument", '''\
class DeviceLoader:
    def __init__(self, data, device):
        self.device = device

    def __iter__(self):
        for batch in loader:
            yield to_device(batch, self.device)

    def __len__(self):
        return len(loader)
''', "incorrect"),
    Answer("ex2", "wrong: builds its generator once, in __init__", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.batches = (to_device(batch, device) for batch in loader)
        self.length = len(loader)

    def __iter__(self):
        return self.batches

    def __len__(self):
        return self.length
''', "incorrect"),
    Answer("ex2", "wrong: len() counts samples, not batches", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for batch in self.loader:
            yield to_device(batch, self.device)

    def __len__(self):
        return len(self.loader.dataset)
''', "incorrect"),
    Answer("ex2", "hostile: __iter__ raises", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader

    def __iter__(self):
        raise RuntimeError("not today")

    def __len__(self):
        return len(self.loader)
''', "incorrect"),
    Answer("ex2", "hostile: the DataLoader class itself", '''\
from torch.utils.data import DataLoader as DeviceLoader
''', "incorrect"),
    Answer("ex2", "right: __iter__ returns a generator expression", '''\
class DeviceLoader:
    """Wrap a DataLoader: every batch comes out already on `device`."""

    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        return (to_device(batch, self.device) for batch in self.loader)

    def __len__(self):
        return len(self.loader)
''', "correct"),
    Answer("ex2", "right: an iterator class with __next__", '''\
class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        self.batches = iter(self.loader)
        return self

    def __next__(self):
        return to_device(next(self.batches), self.device)

    def __len__(self):
        return len(self.loader)
''', "correct"),
    Answer("ex2", "right: map with functools.partial", '''\
import functools


class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.move = functools.partial(to_device, device=device)

    def __iter__(self):
        return map(self.move, self.loader)

    def __len__(self):
        return len(self.loader)
''', "correct"),
    Answer("ex2", "right: moves with tree_map instead of to_device", '''\
from torch.utils._pytree import tree_map


class DeviceLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.device = device

    def __iter__(self):
        for batch in self.loader:
            yield tree_map(lambda x: x.to(self.device) if isinstance(x, torch.Tensor) else x, batch)

    def __len__(self):
        return len(self.loader)
''', "correct"),
    # --- exercise 3: is the copy asynchronous? -----------------------------------------------------------
    Answer("ex3", "wrong: True", COPY_CELL + "copy_is_async = True\n", "incorrect"),
    Answer("ex3", "wrong: the string 'False'", COPY_CELL + 'copy_is_async = "False"\n', "incorrect"),
    Answer("ex3", "wrong: 0 instead of False", COPY_CELL + "copy_is_async = 0\n", "incorrect"),
    Answer("ex3", "wrong: None", COPY_CELL + "copy_is_async = None\n", "incorrect"),
    Answer("ex3", "wrong: rebinds `device` to mps so that any answer would pass", COPY_CELL
           + 'device = torch.device("mps")\ncopy_is_async = True\n', "incorrect", fresh=True),
    Answer("ex3", "wrong: replaces `pageable` with a tensor that is not on the CPU", COPY_CELL
           + 'pageable = torch.empty(3, device="meta")\ncopy_is_async = True\n', "incorrect", fresh=True),
    Answer("ex3", "right: False", COPY_CELL + "copy_is_async = False\n", "correct"),
    Answer("ex3", "right: read from the tensor", COPY_CELL + "copy_is_async = pageable.is_pinned()\n", "correct"),
    Answer("ex3", "right: not True", COPY_CELL + "copy_is_async = not True\n", "correct"),
]
