"""Answers learners might write for lab 02: wrong ones, right ones written differently, hostile ones."""

from harness import Answer, without_cuda

LAB = "02-dataparallel"

STEP_BODY = """    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
"""

ANSWERS = [
    # --- exercise 1: prepare(model, device) -----------------------------------------------------
    Answer("ex1", "wrong: wraps under a new name and returns the unwrapped model", '''
def prepare(model, device):
    model = model.to(device)
    net = nn.DataParallel(model)
    return model
''', "incorrect"),
    Answer("ex1", "wrong: wraps but never moves", '''
def prepare(model, device):
    return nn.DataParallel(model)
''', "incorrect"),
    Answer("ex1", "wrong: moves to the notebook's `device`, not the argument", '''
def prepare(model, target):
    model = model.to(device)
    return nn.DataParallel(model)
''', "incorrect"),
    Answer("ex1", "wrong: .cuda() written after wrapping", '''
def prepare(model, device):
    model = nn.DataParallel(model)
    return model.cuda()
''', "incorrect", key=without_cuda("check.no_cuda")),
    Answer("ex1", "wrong: wraps twice", '''
def prepare(model, device):
    model = nn.DataParallel(model.to(device))
    return nn.DataParallel(model)
''', "incorrect"),
    Answer("ex1", "wrong: wraps a fresh model instead of the one given", '''
def prepare(model, device):
    return nn.DataParallel(make_model().to(device))
''', "incorrect"),
    Answer("ex1", "wrong: nn.DataParallel(make_model) without parentheses", '''
def prepare(model, device):
    model.to(device)
    return nn.DataParallel(make_model)
''', "incorrect"),
    Answer("ex1", "wrong: wraps a moved deep copy", '''
import copy


def prepare(model, device):
    return nn.DataParallel(copy.deepcopy(model).to(device))
''', "incorrect"),
    Answer("ex1", "wrong: forgets the return", '''
def prepare(model, device):
    model = model.to(device)
    model = nn.DataParallel(model)
''', "incorrect"),
    Answer("ex1", "hostile: returns a string", '''
def prepare(model, device):
    return "DataParallel(model)"
''', "incorrect"),
    Answer("ex1", "hostile: loops forever", '''
def prepare(model, device):
    while True:
        pass
''', "incorrect", loops=True),
    Answer("ex1", "hostile: not a function", '''
prepare = nn.DataParallel(make_model())
''', "incorrect"),
    Answer("ex1", "right: wraps first, then moves the wrapper", '''
def prepare(model, device):
    return nn.DataParallel(model).to(device)
''', "correct"),
    Answer("ex1", "right: moves in place without keeping the result of .to()", '''
def prepare(model, device):
    model.to(device)
    wrapped = nn.DataParallel(model)
    return wrapped
''', "correct"),
    Answer("ex1", "right: keyword arguments", '''
def prepare(model, device):
    return nn.DataParallel(module=model.to(device=device), device_ids=None)
''', "correct"),
    # --- exercise 2: make_criterion(class_weights, device) --------------------------------------
    Answer("ex2", "wrong: weights left on the CPU", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights)
''', "incorrect"),
    Answer("ex2", "wrong: the moved weights are thrown away", '''
def make_criterion(class_weights, device):
    class_weights.to(device)
    return nn.CrossEntropyLoss(weight=class_weights)
''', "incorrect", key="ch02.ex2.discarded"),
    Answer("ex2", "wrong: no class weights", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss().to(device)
''', "incorrect"),
    Answer("ex2", "wrong: uses the notebook's class_weights, not the argument", '''
def make_criterion(weights, device):
    return nn.CrossEntropyLoss(weight=class_weights).to(device)
''', "incorrect"),
    Answer("ex2", "wrong: reduction='sum'", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights, reduction="sum").to(device)
''', "incorrect"),
    Answer("ex2", "wrong: label smoothing added", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights, label_smoothing=0.1).to(device)
''', "incorrect"),
    Answer("ex2", "wrong: NLLLoss on raw logits", '''
def make_criterion(class_weights, device):
    return nn.NLLLoss(weight=class_weights).to(device)
''', "incorrect"),
    Answer("ex2", "wrong: moved to the CPU explicitly", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights).to("cpu")
''', "incorrect"),
    Answer("ex2", "hostile: returns None", '''
def make_criterion(class_weights, device):
    return None
''', "incorrect"),
    Answer("ex2", "hostile: raises", '''
def make_criterion(class_weights, device):
    raise RuntimeError("not today")
''', "incorrect"),
    Answer("ex2", "right: weights normalised to sum to 1 (the same loss)", '''
def make_criterion(class_weights, device):
    weights = class_weights / class_weights.sum()
    return nn.CrossEntropyLoss(weight=weights).to(device)
''', "correct"),
    Answer("ex2", "right: moves the weights instead of the module", '''
def make_criterion(class_weights, device):
    return nn.CrossEntropyLoss(weight=class_weights.to(device))
''', "correct"),
    Answer("ex2", "right: a functional loss", '''
import torch.nn.functional as F


def make_criterion(class_weights, device):
    weights = class_weights.to(device)
    return lambda logits, labels: F.cross_entropy(logits, labels, weight=weights)
''', "correct"),
    # --- exercise 3: optimizer_ft ------------------------------------------------------------------
    Answer("ex3", "wrong: built from a fresh model", '''
optimizer_ft = optim.SGD(make_model().parameters(), lr=0.05, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "wrong: built from `net` of section 2", '''
optimizer_ft = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "wrong: only the classifier head", '''
optimizer_ft = optim.SGD(model_ft.module.get_classifier().parameters(), lr=0.05, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "wrong: lr 0.1", '''
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.1, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "wrong: the blog post's lr 0.001", '''
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.001, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "wrong: no momentum", '''
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05)
''', "incorrect"),
    Answer("ex3", "wrong: nesterov", '''
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05, momentum=0.9, nesterov=True)
''', "incorrect"),
    Answer("ex3", "wrong: Adam", '''
optimizer_ft = optim.Adam(model_ft.parameters(), lr=0.05)
''', "incorrect"),
    Answer("ex3", "hostile: an SGD subclass whose step does nothing", '''
class LazySGD(optim.SGD):
    def step(self, closure=None):
        return None


optimizer_ft = LazySGD(model_ft.parameters(), lr=0.05, momentum=0.9)
''', "incorrect"),
    Answer("ex3", "hostile: not an optimizer", '''
optimizer_ft = "SGD"
''', "incorrect"),
    Answer("ex3", "right: positional lr and momentum", '''
optimizer_ft = optim.SGD(model_ft.parameters(), 0.05, 0.9)
''', "correct"),
    Answer("ex3", "right: from the wrapped module's parameters (the same objects)", '''
optimizer_ft = optim.SGD(model_ft.module.parameters(), lr=0.05, momentum=0.9)
''', "correct"),
    Answer("ex3", "right: a list of parameters, written-out defaults", '''
params = [p for p in model_ft.parameters() if p.requires_grad]
optimizer_ft = torch.optim.SGD(params, lr=5e-2, momentum=0.9, dampening=0, weight_decay=0.0, nesterov=False)
''', "correct"),
    # --- exercise 4: train_step --------------------------------------------------------------------
    Answer("ex4", "wrong: labels stay on the CPU", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device)
''' + STEP_BODY, "incorrect"),
    Answer("ex4", "wrong: the moved inputs are thrown away", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs.to(device)
    labels = labels.to(device)
''' + STEP_BODY, "incorrect"),
    Answer("ex4", "wrong: moves to the notebook's `device`", '''
def train_step(model, criterion, optimizer, inputs, labels, target):
    inputs, labels = inputs.to(device), labels.to(device)
''' + STEP_BODY, "incorrect"),
    Answer("ex4", "wrong: no zero_grad", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
''', "incorrect"),
    Answer("ex4", "wrong: no optimizer.step()", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    return loss.item()
''', "incorrect"),
    Answer("ex4", "wrong: returns the loss tensor", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss
''', "incorrect"),
    Answer("ex4", "wrong: uses the notebook's optimizer_ft", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer_ft.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer_ft.step()
    return loss.item()
''', "incorrect", key="ch02.ex4.other_optimizer"),
    Answer("ex4", "wrong: trains the notebook's model_ft (a conv net: the test batch does not fit it)", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer_ft.zero_grad()
    loss = criterion(model_ft(inputs), labels)
    loss.backward()
    optimizer_ft.step()
    return loss.item()
''', "incorrect", key="ch02.ex4.other_model"),
    Answer("ex4", "wrong: the notebook's names everywhere (model_ft, criterion, optimizer_ft)", '''
def train_step(model, loss_fn, opt, x, y, device):
    x, y = x.to(device), y.to(device)
    optimizer_ft.zero_grad()
    loss = criterion(model_ft(x), y)
    loss.backward()
    optimizer_ft.step()
    return loss.item()
''', "incorrect", key="ch02.ex4.other_model"),
    Answer("ex4", "wrong: .cuda() on the batch", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.cuda(), labels.cuda()
''' + STEP_BODY, "incorrect", key=without_cuda("check.no_cuda")),
    Answer("ex4", "wrong: uses the notebook's criterion", '''
def train_step(model, loss_fn, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
''', "incorrect"),
    Answer("ex4", "wrong: the labels moved as float (cross_entropy wants class indices)", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device).float()
''' + STEP_BODY, "incorrect"),
    Answer("ex4", "wrong: everything moved as float64", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device, torch.float64), labels.to(device)
''' + STEP_BODY, "incorrect"),
    Answer("ex4", "right: labels moved with an explicit dtype=torch.long", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device=device, dtype=torch.long)
''' + STEP_BODY, "correct"),
    Answer("ex4", "hostile: raises", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    raise ValueError("no")
''', "incorrect"),
    Answer("ex4", "right: zero_grad after the step", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs, labels = inputs.to(device), labels.to(device)
    loss = criterion(model(inputs), labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
''', "correct"),
    Answer("ex4", "right: model.zero_grad(), non_blocking moves, float(loss.detach())", '''
def train_step(model, criterion, optimizer, inputs, labels, device):
    inputs = inputs.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
    model.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    return float(loss.detach())
''', "correct"),
]
