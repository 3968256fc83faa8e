"""Answers learners might write for lab 01: wrong ones, right ones written differently, hostile ones."""

from harness import Answer, without_cuda

LAB = "01-devices"

RIGHT_PREDICTIONS = {1: '"cpu"', 2: '"cpu"', 3: '"target"', 4: '"target"', 5: "True", 6: "True"}


def _predict(before: str = "", **changed: str) -> str:
    """A whole ex1 answer cell: the right predictions with `changed` ones (answer_N=...), after `before`."""
    values = {**RIGHT_PREDICTIONS, **{int(k.split("_")[1]): v for k, v in changed.items()}}
    lines = [f"answer_{n} = {values[n]}" for n in sorted(values)]
    return before + "\n".join(lines) + "\n"


def _mover(body: str, before: str = "") -> str:
    """A whole `to_device` answer cell with `body` as its body."""
    lines = "\n".join("    " + line if line else "" for line in body.strip("\n").splitlines())
    return f"{before}def to_device(model, inputs, labels, device):\n{lines}\n"


ANSWERS = [
    # --- ex1: predict, then run --------------------------------------------------------------------
    Answer("ex1", "wrong: believes a discarded x.to(target) moves x", _predict(answer_2='"target"'), "incorrect"),
    Answer("ex1", "wrong: believes Module.to() returns a moved copy", _predict(answer_4='"cpu"', answer_5="False"),
           "incorrect"),
    Answer("ex1", "wrong: believes .to() always copies", _predict(answer_6="False"), "incorrect"),
    Answer("ex1", "wrong: believes new tensors start on the GPU", _predict(answer_1='"target"'), "incorrect"),
    Answer("ex1", "wrong: every answer swapped", _predict(answer_1='"target"', answer_2='"target"', answer_3='"cpu"',
                                                          answer_4='"cpu"', answer_5="False", answer_6="False"),
           "incorrect"),
    Answer("ex1", "wrong: quoted 'True'", _predict(answer_5='"True"'), "incorrect"),
    Answer("ex1", "wrong: answers 'gpu'", _predict(answer_3='"gpu"'), "incorrect"),
    Answer("ex1", "wrong: rebinds `target` to the CPU and predicts for it",
           _predict('target = torch.device("cpu")\n', answer_3='"cpu"', answer_4='"cpu"'), "incorrect", fresh=True),
    Answer("ex1", "wrong: right predictions, but rebinds `device` to `target` (the proof then fails)",
           _predict("device = target\n"), "incorrect", fresh=True),
    Answer("ex1", "wrong: sets the default device to `target` so that question 1 becomes 'target'",
           _predict("torch.set_default_device(target)\n", answer_1='"target"'), "incorrect", fresh=True),
    Answer("ex1", "hostile: an answer equal to everything",
           _predict("class Anything:\n    def __eq__(self, other):\n        return True\n\n\n",
                    answer_3="Anything()"), "incorrect"),
    Answer("ex1", "hostile: a str subclass equal to everything",
           _predict("class Sly(str):\n    __hash__ = str.__hash__\n\n    def __eq__(self, other):\n"
                    "        return True\n\n\n", answer_3='Sly("cpu")'), "incorrect"),
    Answer("ex1", "right: the devices themselves instead of the words",
           _predict(answer_1='torch.device("cpu")', answer_3="target", answer_4="target"), "correct"),
    Answer("ex1", "right: other spellings and computed booleans",
           _predict(answer_1='"CPU"', answer_2='" cpu "', answer_3='"Target"', answer_5="1 == 1",
                    answer_6="not False"), "correct"),
    Answer("ex1", "right: the device's own name (meta here, cuda on a GPU)",
           _predict(answer_3="str(target)", answer_4="target.type"), "correct"),
    # --- ex2: to_device -----------------------------------------------------------------------------
    Answer("ex2", "wrong: the blog post's three lines as they stand", _mover("""
model.to(device)
inputs.to(device)
labels.to(device)
return model, inputs, labels
"""), "incorrect"),
    Answer("ex2", "wrong: forgets to keep the labels", _mover("""
model.to(device)
inputs = inputs.to(device)
labels.to(device)
return model, inputs, labels
"""), "incorrect"),
    Answer("ex2", "wrong: moves to the notebook's global `target`, not the argument", _mover("""
model.to(target)
inputs = inputs.to(target)
labels = labels.to(target)
return model, inputs, labels
"""), "incorrect"),
    Answer("ex2", "wrong: moves to the notebook's global `device` (argument renamed)", '''\
def to_device(model, inputs, labels, where):
    model.to(device)
    inputs = inputs.to(device)
    labels = labels.to(device)
    return model, inputs, labels
''', "incorrect"),
    Answer("ex2", "wrong: returns a moved copy of the model (the optimizer keeps the original)", _mover("""
import copy
moved = copy.deepcopy(model).to(device)
return moved, inputs.to(device), labels.to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: casts the labels to float", _mover("""
model.to(device)
return model, inputs.to(device), labels.to(device).float()
"""), "incorrect"),
    Answer("ex2", "wrong: casts the labels with .to(device, torch.float32)", _mover("""
model.to(device)
return model, inputs.to(device), labels.to(device, torch.float32)
"""), "incorrect"),
    Answer("ex2", "wrong: halves the inputs", _mover("""
model.to(device)
return model, inputs.to(device).half(), labels.to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: normalises the inputs", _mover("""
model.to(device)
inputs = (inputs - inputs.mean()) / inputs.std()
return model, inputs.to(device), labels.to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: returns the batch only", _mover("""
model.to(device)
return inputs.to(device), labels.to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: returns the three in another order", _mover("""
return inputs.to(device), labels.to(device), model.to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: .cuda() instead of the device", _mover("""
return model.cuda(), inputs.cuda(), labels.cuda()
"""), "incorrect", key=without_cuda("check.no_cuda")),
    Answer("ex2", "wrong: a right function, but rebinds `device` to `target` (the proof then fails)",
           _mover("""
model.to(device)
return model, inputs.to(device), labels.to(device)
""", before="device = target\n\n\n"), "incorrect", fresh=True),
    Answer("ex2", "wrong: sets the default device instead of moving the batch", _mover("""
torch.set_default_device(device)
model.to(device)
return model, inputs, labels
"""), "incorrect"),
    Answer("ex2", "hostile: raises", _mover("""
raise ValueError("not today")
"""), "incorrect"),
    Answer("ex2", "hostile: returns junk", _mover("""
return "model", "inputs", "labels"
"""), "incorrect"),
    Answer("ex2", "hostile: loops forever", _mover("""
while True:
    pass
"""), "incorrect", loops=True),
    Answer("ex2", "hostile: not a function", "to_device = 42\n", "incorrect"),
    Answer("ex2", "right: reassigns the model too, non_blocking copies", _mover("""
model = model.to(device)
inputs = inputs.to(device, non_blocking=True)
labels = labels.to(device, non_blocking=True)
return model, inputs, labels
"""), "correct"),
    Answer("ex2", "right: one line, keyword device=", _mover("""
return model.to(device=device), inputs.to(device=device), labels.to(device=device)
"""), "correct"),
    Answer("ex2", "right: a loop over the tensors, a list returned", _mover("""
model.to(device)
inputs, labels = [t.to(device) for t in (inputs, labels)]
return [model, inputs, labels]
"""), "correct"),
    Answer("ex2", "right: moves only what is elsewhere, copy=True", _mover("""
if inputs.device != device:
    inputs = inputs.to(device, copy=True)
if labels.device != device:
    labels = labels.to(device, copy=True)
model.to(device)
return model, inputs, labels
"""), "correct"),
    Answer("ex2", "right: a generator of the three", _mover("""
yield model.to(device)
yield inputs.to(device)
yield labels.to(device)
"""), "correct"),
]
