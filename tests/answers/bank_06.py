"""Answers learners might write for lab 06: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "06-multigpu"


def rank_device(body: str) -> str:
    """An answer to exercise 1: rank_device with this body."""
    lines = "\n".join("    " + line if line else "" for line in body.splitlines())
    return f'def rank_device(local_rank):\n    """The device of this rank."""\n{lines}\n'


def wrap_model(body: str) -> str:
    """An answer to exercise 2: wrap_model with this body."""
    lines = "\n".join("    " + line if line else "" for line in body.splitlines())
    return f'def wrap_model(model, device):\n    """Move, then wrap."""\n{lines}\n'


ANSWERS = [
    # --- exercise 1: rank_device ------------------------------------------------------------------------
    Answer("ex1", "wrong: every rank on a bare cuda (set_device forgotten)", rank_device(
        'return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")'), "incorrect"),
    Answer("ex1", "wrong: the right GPU number, but set_device never called", rank_device(
        'return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")'),
        "incorrect"),
    Answer("ex1", "wrong: always GPU 0", rank_device(
        'if torch.cuda.is_available():\n    torch.cuda.set_device(0)\n    return torch.device("cuda:0")\n'
        'return torch.device("cpu")'), "incorrect"),
    Answer("ex1", "wrong: set_device without testing for CUDA", rank_device(
        'torch.cuda.set_device(local_rank)\nreturn torch.device("cuda", local_rank)'), "incorrect"),
    Answer("ex1", "wrong: returns the notebook's device (mps on a Mac, the lab's device elsewhere)", rank_device(
        "return device"), "incorrect"),
    Answer("ex1", "wrong: a string instead of a torch.device", rank_device(
        'if torch.cuda.is_available():\n    torch.cuda.set_device(local_rank)\n    return f"cuda:{local_rank}"\n'
        'return "cpu"'), "incorrect"),
    Answer("ex1", "wrong: reads LOCAL_RANK from the environment instead of its argument", rank_device(
        'import os\nlocal = int(os.environ["LOCAL_RANK"])\nif torch.cuda.is_available():\n'
        '    torch.cuda.set_device(local)\n    return torch.device("cuda", local)\nreturn torch.device("cpu")'),
        "incorrect"),
    Answer("ex1", "wrong: uses the GPU even where CUDA is missing (set_device swallowed)", rank_device(
        'try:\n    torch.cuda.set_device(local_rank)\nexcept Exception:\n    pass\n'
        'return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")'),
        "incorrect"),
    Answer("ex1", "right: set_device, then a bare cuda", rank_device(
        'if torch.cuda.is_available():\n    torch.cuda.set_device(local_rank)\n    return torch.device("cuda")\n'
        'return torch.device("cpu")'), "correct"),
    Answer("ex1", "right: an f-string device, CPU first", rank_device(
        'if not torch.cuda.is_available():\n    return torch.device("cpu")\n'
        'device = torch.device(f"cuda:{local_rank}")\ntorch.cuda.set_device(device)\nreturn device'), "correct"),
    Answer("ex1", "hostile: raises", rank_device('raise RuntimeError("nope")'), "incorrect"),
    Answer("ex1", "hostile: loops forever", rank_device("while True:\n    pass"), "incorrect", loops=True),
    Answer("ex1", "hostile: not a function", "rank_device = 42\n", "incorrect"),
    # --- exercise 2: wrap_model -------------------------------------------------------------------------
    Answer("ex2", "wrong: device_ids=[local GPU] also on the CPU", wrap_model(
        "return DistributedDataParallel(model.to(device), device_ids=[0])"), "incorrect"),
    Answer("ex2", "wrong: device_ids=[device.index] everywhere (None on the CPU)", wrap_model(
        "return DistributedDataParallel(model.to(device), device_ids=[device.index])"), "incorrect"),
    Answer("ex2", "wrong: GPU 0 in device_ids on every rank", wrap_model(
        "ids = [0] if device.type == 'cuda' else None\n"
        "return DistributedDataParallel(model.to(device), device_ids=ids)"), "incorrect"),
    Answer("ex2", "wrong: wrapped, then moved", wrap_model(
        "return DistributedDataParallel(model).to(device)"), "incorrect"),
    Answer("ex2", "wrong: never moved", wrap_model("return DistributedDataParallel(model)"), "incorrect"),
    Answer("ex2", "wrong: DataParallel instead of DDP", wrap_model(
        "return nn.DataParallel(model.to(device))"), "incorrect"),
    Answer("ex2", "wrong: moved but not wrapped", wrap_model("return model.to(device)"), "incorrect"),
    Answer("ex2", "wrong: every GPU rank's model on cuda:0", wrap_model(
        "model = model.to('cuda:0' if device.type == 'cuda' else device)\n"
        "return DistributedDataParallel(model)"), "incorrect"),
    Answer("ex2", "right: no device_ids at all (allowed for a model on one GPU)", wrap_model(
        "model.to(device)\nreturn DistributedDataParallel(model)"), "correct"),
    Answer("ex2", "right: device_ids and output_device as torch.device", wrap_model(
        "model = model.to(device)\nif device.type != 'cuda':\n    return DistributedDataParallel(model)\n"
        "return DistributedDataParallel(model, device_ids=[device], output_device=device)"), "correct"),
    Answer("ex2", "hostile: raises", wrap_model("raise RuntimeError('nope')"), "incorrect"),
    Answer("ex2", "hostile: loops forever", wrap_model("while True:\n    pass"), "incorrect", loops=True),
    Answer("ex2", "hostile: returns junk", wrap_model("return 'DistributedDataParallel'"), "incorrect"),
]
