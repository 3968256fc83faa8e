"""Answers learners might write for lab 07: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "07-checkpoints"


def loader(body: str) -> str:
    """An answer to exercise 1 with its own body."""
    return f'''\
def load_weights(path, device):
    """A state_dict from `path`, every tensor on `device`, whatever device saved it; no code from the file runs."""
    {body}
'''


def unwrapper(body: str) -> str:
    """An answer to exercise 2 with its own body."""
    return f'''\
def unwrap(state_dict):
    """The state_dict of a DataParallel/DDP model, with the leading "module." of its keys removed."""
    {body}
'''


RESUME = '''\
def resume(path, device):
    checkpoint = torch.load(path, map_location={where}, weights_only=True)
{steps}
    return model, optimizer, checkpoint["epoch"]
'''
RIGHT_STEPS = '''\
    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])'''


def resumer(steps: str = RIGHT_STEPS, where: str = "device") -> str:
    """An answer to exercise 3 with its own steps."""
    return RESUME.format(where=where, steps=steps)


ANSWERS = [
    # --- exercise 1: load_weights ---------------------------------------------------------------------
    Answer("ex1", "wrong: torch.load with no map_location", loader("return torch.load(path)"), "incorrect"),
    Answer("ex1", "wrong: always to the CPU", loader('return torch.load(path, map_location="cpu")'), "incorrect"),
    Answer("ex1", "wrong: to the notebook's global `device`",
           loader("return torch.load(path, map_location=globals()['device'])"), "incorrect"),
    Answer("ex1", "wrong: weights_only=False (runs the file's code)",
           loader("return torch.load(path, map_location=device, weights_only=False)"), "incorrect"),
    Answer("ex1", "wrong: load, then .to(device) each tensor (fails before the move)",
           loader("return {k: v.to(device) for k, v in torch.load(path).items()}"), "incorrect"),
    Answer("ex1", "wrong: a dict map_location for cuda:0 only",
           loader('return torch.load(path, map_location={"cuda:0": "cpu"})'), "incorrect"),
    Answer("ex1", "wrong: to the CPU, then each tensor moved without keeping the copy",
           loader('state = torch.load(path, map_location="cpu")\n    for value in state.values():\n'
                  '        value.to(device)\n    return state'), "incorrect", key="ch07.ex1.discarded"),
    Answer("ex1", "hostile: raises", loader("raise OSError('disk on fire')"), "incorrect"),
    Answer("ex1", "hostile: returns junk", loader("return 42"), "incorrect"),
    Answer("ex1", "right: weights_only left to its default (True since 2.6)",
           loader("return torch.load(path, map_location=torch.device(device))"), "correct"),
    Answer("ex1", "right: to the CPU, then moved",
           loader('state = torch.load(path, map_location="cpu", weights_only=True)\n'
                  '    return {k: v.to(device) for k, v in state.items()}'), "correct"),
    # --- exercise 2: unwrap -----------------------------------------------------------------------------
    Answer("ex2", "wrong: str.replace also changes `submodule.`",
           unwrapper('return {k.replace("module.", ""): v for k, v in state_dict.items()}'), "incorrect"),
    Answer("ex2", "wrong: always drops 7 characters",
           unwrapper("return {k[7:]: v for k, v in state_dict.items()}"), "incorrect"),
    Answer("ex2", "wrong: lstrip strips characters, not a prefix",
           unwrapper('return {k.lstrip("module."): v for k, v in state_dict.items()}'), "incorrect"),
    Answer("ex2", "wrong: returns what consume_prefix returns (None)",
           unwrapper("from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n"
                     '    return consume_prefix_in_state_dict_if_present(state_dict, "module.")'), "incorrect"),
    Answer("ex2", "wrong: split on the first dot",
           unwrapper('return {k.split(".", 1)[1]: v for k, v in state_dict.items()}'), "incorrect"),
    Answer("ex2", "wrong: drops 7 characters from every key when the first key is wrapped",
           unwrapper('if next(iter(state_dict)).startswith("module."):\n'
                     "        return {k[7:]: v for k, v in state_dict.items()}\n    return dict(state_dict)"),
           "incorrect"),
    Answer("ex2", "wrong: unwraps only when every key is wrapped",
           unwrapper('if all(k.startswith("module.") for k in state_dict):\n'
                     "        return {k[7:]: v for k, v in state_dict.items()}\n    return dict(state_dict)"),
           "incorrect"),
    Answer("ex2", "hostile: zeroes the values in place",
           unwrapper("for v in state_dict.values():\n        v.zero_()\n"
                     '    return {k.removeprefix("module."): v for k, v in state_dict.items()}'), "incorrect"),
    Answer("ex2", "hostile: loops forever", unwrapper("while True:\n        pass"), "incorrect", loops=True),
    Answer("ex2", "right: keys sorted into a new order (load_state_dict does not care)",
           unwrapper('return {k.removeprefix("module."): state_dict[k] for k in sorted(state_dict)}'), "correct"),
    Answer("ex2", "right: copies of the values (they load just as well)",
           unwrapper('return {k.removeprefix("module."): v.clone() for k, v in state_dict.items()}'), "correct"),
    Answer("ex2", "right: a regular expression anchored at the start",
           unwrapper('import re\n    return {re.sub(r"^module\\.", "", k): v for k, v in state_dict.items()}'),
           "correct"),
    Answer("ex2", "right: PyTorch's helper, then the dict",
           unwrapper("from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n"
                     '    consume_prefix_in_state_dict_if_present(state_dict, "module.")\n'
                     "    return state_dict"), "correct"),
    Answer("ex2", "right: startswith and a slice",
           unwrapper('return {(k[7:] if k.startswith("module.") else k): v for k, v in state_dict.items()}'),
           "correct"),
    # --- exercise 3: resume -----------------------------------------------------------------------------
    Answer("ex3", "wrong: the model moved last", resumer('''\
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)'''), "incorrect"),
    Answer("ex3", "wrong: the optimizer's state never loaded", resumer('''\
    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])'''), "incorrect"),
    Answer("ex3", "wrong: the model never moved", resumer('''\
    model = Net()
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    optimizer.load_state_dict(checkpoint["optimizer"])'''), "incorrect"),
    Answer("ex3", "wrong: no map_location", '''\
def resume(path, device):
    checkpoint = torch.load(path)
    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer, checkpoint["epoch"]
''', "incorrect"),
    Answer("ex3", "wrong: forgets the epoch", '''\
def resume(path, device):
    checkpoint = torch.load(path, map_location=device)
    model = Net().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer
''', "incorrect"),
    Answer("ex3", "hostile: raises", '''\
def resume(path, device):
    raise KeyError("optimizer")
''', "incorrect"),
    Answer("ex3", "right: weights loaded on the CPU, then moved, then the optimizer", resumer('''\
    model = Net()
    model.load_state_dict(checkpoint["model"])
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    optimizer.load_state_dict(checkpoint["optimizer"])''', where='"cpu"'), "correct"),
    Answer("ex3", "right: the solution's order with map_location to the device", resumer(), "correct"),
    Answer("ex3", "right: optimizer built first, then the model moved, then both states loaded (a GPU keeps the "
           "Parameter objects)", resumer('''\
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.to(device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])''', where='"cpu"'), "correct"),
]
