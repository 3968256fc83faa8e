"""Answers learners might write for lab 08: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "08-amp"


def autocast_for(body: str) -> str:
    """An answer to exercise 1: autocast_for with its own body."""
    return f"def autocast_for(device):\n    {body}\n"


def prepare(x: str, y: str = "labels.to(device).long()") -> str:
    """An answer to exercise 2: prepare with its own two lines."""
    return f"def prepare(images, labels, device):\n    x = {x}\n    y = {y}\n    return x, y\n"


SCALE = "scaler.scale(loss).backward()"
UNSCALE = "scaler.unscale_(optimizer)"
CLIP = "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)"
STEP = "scaler.step(optimizer)"
UPDATE = "scaler.update()"
ZERO = "optimizer.zero_grad()"


def amp_step(*lines: str) -> str:
    """An answer to exercise 3: amp_step made of these lines, in this order."""
    body = "\n    ".join(lines) or "pass"
    return f"def amp_step(model, optimizer, scaler, loss, max_norm):\n    {body}\n"


RIGHT_ORDER = (SCALE, UNSCALE, CLIP, STEP, UPDATE, ZERO)

ANSWERS = [
    # --- exercise 1: autocast_for -------------------------------------------------------------------------
    Answer("ex1", "wrong: hard-coded \"cuda\" (the blog post's habit)",
           autocast_for('return torch.autocast("cuda")'), "incorrect"),
    Answer("ex1", "wrong: hard-coded \"cpu\" (works here, not on a GPU)",
           autocast_for('return torch.autocast("cpu")'), "incorrect"),
    Answer("ex1", "wrong: the deprecated torch.cuda.amp.autocast on CUDA",
           autocast_for('return torch.cuda.amp.autocast() if device.type == "cuda" '
                        'else torch.autocast(device.type)'), "incorrect"),
    Answer("ex1", "wrong: str(device) gives \"cuda:0\", not a device type",
           autocast_for("return torch.autocast(str(device))"), "incorrect"),
    Answer("ex1", "wrong: passes the torch.device itself",
           autocast_for("return torch.autocast(device)"), "incorrect"),
    Answer("ex1", "wrong: float32 is no lower precision",
           autocast_for("return torch.autocast(device.type, dtype=torch.float32)"), "incorrect"),
    Answer("ex1", "wrong: turned on only where CUDA exists",
           autocast_for("return torch.autocast(device.type, enabled=torch.cuda.is_available())"), "incorrect"),
    Answer("ex1", "wrong: enters the context inside the function and returns nothing",
           autocast_for("with torch.autocast(device.type):\n        pass"), "incorrect"),
    Answer("ex1", "right: torch.amp.autocast with the device type",
           autocast_for("return torch.amp.autocast(device.type)"), "correct"),
    Answer("ex1", "right: bfloat16 chosen explicitly",
           autocast_for("return torch.autocast(device_type=device.type, dtype=torch.bfloat16)"), "correct"),
    Answer("ex1", "right: float16 chosen explicitly, enabled=True",
           autocast_for("return torch.autocast(device.type, dtype=torch.float16, enabled=True)"), "correct"),
    Answer("ex1", "right: a @contextmanager that enters torch.autocast (the with-statement still works)",
           "from contextlib import contextmanager\n\n@contextmanager\ndef autocast_for(device):\n"
           "    with torch.autocast(device.type):\n        yield\n", "correct"),
    Answer("ex1", "right: a class of one's own that enters autocast for the device type",
           "class autocast_for:\n    def __init__(self, device):\n"
           "        self.inner = torch.autocast(torch.device(device).type)\n"
           "    def __enter__(self):\n        return self.inner.__enter__()\n"
           "    def __exit__(self, *exc):\n        return self.inner.__exit__(*exc)\n", "correct"),
    Answer("ex1", "wrong: a @contextmanager that yields without autocast",
           "from contextlib import contextmanager\n\n@contextmanager\ndef autocast_for(device):\n"
           "    yield\n", "incorrect"),
    Answer("ex1", "wrong: a @contextmanager around the hard-coded \"cuda\"",
           "from contextlib import contextmanager\n\n@contextmanager\ndef autocast_for(device):\n"
           "    with torch.autocast(\"cuda\"):\n        yield\n", "incorrect"),
    Answer("ex1", "wrong: a @contextmanager with float32",
           "from contextlib import contextmanager\n\n@contextmanager\ndef autocast_for(device):\n"
           "    with torch.autocast(device.type, dtype=torch.float32):\n        yield\n", "incorrect"),
    Answer("ex1", "hostile: special-cases the CPU and returns a disabled context elsewhere",
           autocast_for('return torch.autocast(device.type, enabled=device.type == "cpu")'), "incorrect"),
    Answer("ex1", "hostile: raises", autocast_for('raise RuntimeError("nope")'), "incorrect"),
    Answer("ex1", "hostile: loops forever", autocast_for("while True:\n        pass"), "incorrect", loops=True),
    Answer("ex1", "hostile: returns a string", autocast_for('return "cuda"'), "incorrect"),
    # --- exercise 2: prepare ------------------------------------------------------------------------------
    Answer("ex2", "wrong: casts the images to half by hand",
           prepare("images.to(device).half() / 255"), "incorrect"),
    Answer("ex2", "wrong: float64 images",
           prepare("images.to(device).double() / 255"), "incorrect"),
    Answer("ex2", "wrong: uint8 pixels left as they are",
           prepare("images.to(device)"), "incorrect"),
    Answer("ex2", "wrong: float32 but not scaled to [0, 1]",
           prepare("images.to(device).float()"), "incorrect"),
    Answer("ex2", "wrong: labels left as int32",
           prepare("images.to(device).float() / 255", "labels.to(device)"), "incorrect"),
    Answer("ex2", "wrong: labels as float",
           prepare("images.to(device).float() / 255", "labels.to(device).float()"), "incorrect"),
    Answer("ex2", "wrong: not moved at all",
           prepare("images.float() / 255", "labels.long()"), "incorrect"),
    Answer("ex2", "wrong: moves to the global `device`, not the argument",
           "def prepare(images, labels, target):\n    return images.to(device).float() / 255, "
           "labels.to(device).long()\n", "incorrect"),
    Answer("ex2", "right: divide first (uint8 / 255 is float32), then move",
           prepare("(images / 255).to(device)", "labels.to(device=device, dtype=torch.int64)"), "correct"),
    Answer("ex2", "right: .to(device, dtype) then div",
           prepare("images.to(device, torch.float32).div(255.0)", "labels.to(device, torch.long)"), "correct"),
    Answer("ex2", "right: as_tensor, returned as a list",
           "def prepare(images, labels, device):\n"
           "    return [torch.as_tensor(images, dtype=torch.float32, device=device) / 255,\n"
           "            torch.as_tensor(labels, device=device).long()]\n", "correct"),
    Answer("ex2", "wrong: scaled by the batch's brightest pixel, not by 255",
           prepare("images.to(device).float() / images.max()"), "incorrect"),
    Answer("ex2", "wrong: min-max normalised per batch",
           prepare("((images.float() - images.min()) / (images.max() - images.min())).to(device)"), "incorrect"),
    Answer("ex2", "wrong: standardised (mean 0, std 1) instead of [0, 1]",
           prepare("((images.float() - images.float().mean()) / images.float().std()).to(device)"), "incorrect"),
    Answer("ex2", "right: multiplied by 1/255 with torch.true_divide's twin",
           prepare("images.to(device).float().mul(1 / 255)"), "correct"),
    Answer("ex2", "hostile: raises", "def prepare(images, labels, device):\n    raise ValueError('no')\n", "incorrect"),
    Answer("ex2", "hostile: returns None", "def prepare(images, labels, device):\n    pass\n", "incorrect"),
    Answer("ex2", "hostile: zeroes the data set's labels in place",
           "def prepare(images, labels, device):\n    labels.zero_()\n"
           "    return images.to(device).float() / 255, labels.to(device).long()\n", "incorrect"),
    # --- exercise 3: amp_step -----------------------------------------------------------------------------
    Answer("ex3", "wrong: clips before unscale_", amp_step(SCALE, CLIP, STEP, UPDATE, ZERO), "incorrect"),
    Answer("ex3", "wrong: never clips", amp_step(SCALE, UNSCALE, STEP, UPDATE, ZERO), "incorrect"),
    Answer("ex3", "wrong: clips after the step", amp_step(SCALE, UNSCALE, STEP, UPDATE, CLIP, ZERO), "incorrect"),
    Answer("ex3", "wrong: optimizer.step() instead of scaler.step",
           amp_step(SCALE, UNSCALE, CLIP, "optimizer.step()", UPDATE, ZERO), "incorrect"),
    Answer("ex3", "wrong: forgets scaler.update()", amp_step(SCALE, UNSCALE, CLIP, STEP, ZERO), "incorrect"),
    Answer("ex3", "wrong: never clears the gradients", amp_step(SCALE, UNSCALE, CLIP, STEP, UPDATE), "incorrect"),
    Answer("ex3", "wrong: backward of the unscaled loss",
           amp_step("loss.backward()", UNSCALE, CLIP, STEP, UPDATE, ZERO), "incorrect"),
    Answer("ex3", "wrong: update before step", amp_step(SCALE, UNSCALE, CLIP, UPDATE, STEP, ZERO), "incorrect"),
    Answer("ex3", "wrong: the plain float32 step, no scaler at all",
           amp_step("loss.backward()", CLIP, "optimizer.step()", ZERO), "incorrect"),
    Answer("ex3", "wrong: backward without the scaler, then the scaler's unscale_ and step",
           amp_step("loss.backward()", UNSCALE, STEP, UPDATE, ZERO), "incorrect"),
    Answer("ex3", "right: an extra scaler.scale(loss) never backpropagated (harmless)",
           amp_step(SCALE, "scaler.scale(loss)", UNSCALE, CLIP, STEP, UPDATE, ZERO), "correct"),
    Answer("ex3", "right: the solution's order", amp_step(*RIGHT_ORDER), "correct"),
    Answer("ex3", "right: zero_grad first, set_to_none=False",
           amp_step("optimizer.zero_grad(set_to_none=False)", SCALE, UNSCALE, CLIP, STEP, UPDATE), "correct"),
    Answer("ex3", "right: nn.utils with keyword max_norm, and a return value",
           amp_step(SCALE, UNSCALE, "nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=max_norm)",
                    STEP, UPDATE, ZERO, "return loss.detach()"), "correct"),
    Answer("ex3", "hostile: raises", amp_step("raise RuntimeError('nope')"), "incorrect"),
    Answer("ex3", "hostile: loops forever", amp_step("while True:\n        pass"), "incorrect", loops=True),
    Answer("ex3", "hostile: does nothing", amp_step("pass"), "incorrect"),
]
