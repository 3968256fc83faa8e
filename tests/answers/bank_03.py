"""Answers learners might write for lab 03: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "03-embedding"


def _step(body: str) -> str:
    """A whole `train_step` answer cell with `body` as its body."""
    lines = "\n".join("    " + line if line else "" for line in body.strip("\n").splitlines())
    return f"def train_step(model, criterion, optimizer, token_ids, labels, device):\n{lines}\n"


def _mover(body: str) -> str:
    """A whole `move_batch` answer cell with `body` as its body."""
    lines = "\n".join("    " + line if line else "" for line in body.strip("\n").splitlines())
    return f"def move_batch(batch, device):\n{lines}\n"


def _forward(body: str) -> str:
    """A whole `AutoMoveClassifier` answer cell whose `forward` has `body` as its body."""
    lines = "\n".join("        " + line if line else "" for line in body.strip("\n").splitlines())
    return (
        "class AutoMoveClassifier(TextClassifier):\n"
        '    """TextClassifier that moves its input to wherever its parameters are."""\n\n'
        f"    def forward(self, token_ids):\n{lines}\n"
    )


ANSWERS = [
    # --- ex1: train_step -------------------------------------------------------------------------
    Answer("ex1", "wrong: forgets the labels", _step("""
token_ids = token_ids.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: moves the labels without keeping the result", _step("""
token_ids = token_ids.to(device)
labels.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: moves to the notebook's global `device`, not the argument", '''\
def train_step(model, criterion, optimizer, token_ids, labels, _device):
    token_ids, labels = token_ids.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
''', "incorrect"),
    Answer("ex1", "wrong: moves to a hard-coded cuda", _step("""
token_ids, labels = token_ids.to("cuda"), labels.to("cuda")
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: casts the labels to float", _step("""
token_ids, labels = token_ids.to(device), labels.to(device).float()
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: casts the token ids to float", _step("""
token_ids, labels = token_ids.to(device, torch.float32), labels.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: never zeroes the gradients", _step("""
token_ids, labels = token_ids.to(device), labels.to(device)
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: zeroes the gradients between backward and step", _step("""
token_ids, labels = token_ids.to(device), labels.to(device)
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.zero_grad()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: forgets optimizer.step()", _step("""
token_ids, labels = token_ids.to(device), labels.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: returns the loss tensor", _step("""
token_ids, labels = token_ids.to(device), labels.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss
"""), "incorrect"),
    Answer("ex1", "wrong: computes the loss under torch.no_grad()", _step("""
token_ids, labels = token_ids.to(device), labels.to(device)
optimizer.zero_grad()
with torch.no_grad():
    loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "wrong: moves the model to the batch instead (model.cpu())", _step("""
model.cpu()
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "incorrect"),
    Answer("ex1", "right: labels moved to logits.device", _step("""
optimizer.zero_grad()
logits = model(token_ids.to(device))
loss = criterion(logits, labels.to(logits.device))
loss.backward()
optimizer.step()
return loss.item()
"""), "correct"),
    Answer("ex1", "right: everything moved to next(model.parameters()).device", _step("""
where = next(model.parameters()).device
token_ids, labels = token_ids.to(where), labels.to(where)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "correct"),
    Answer("ex1", "right: zero_grad at the end of the step, non_blocking copies", _step("""
token_ids = token_ids.to(device, non_blocking=True)
labels = labels.to(device, non_blocking=True)
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
optimizer.zero_grad()
return loss.item()
"""), "correct"),
    Answer("ex1", "right: model.zero_grad(set_to_none=False), float(loss)", _step("""
model.zero_grad(set_to_none=False)
loss = criterion(model(token_ids.to(device)), labels.to(device))
loss.backward()
optimizer.step()
return float(loss.detach())
"""), "correct"),
    Answer("ex1", "right: one-hot class probabilities", _step("""
token_ids = token_ids.to(device)
optimizer.zero_grad()
logits = model(token_ids)
targets = torch.nn.functional.one_hot(labels, logits.shape[1]).float().to(device)
loss = criterion(logits, targets)
loss.backward()
optimizer.step()
return loss.item()
"""), "correct"),
    Answer("ex1", "right: also moves the model to `device` (already there) and sets train mode", _step("""
model.to(device)
model.train()
token_ids, labels = token_ids.to(device), labels.to(device)
optimizer.zero_grad()
loss = criterion(model(token_ids), labels)
loss.backward()
optimizer.step()
return loss.item()
"""), "correct"),
    Answer("ex1", "hostile: raises", _step("""
raise ValueError("not today")
"""), "incorrect"),
    Answer("ex1", "hostile: returns a string", _step("""
return "0.1"
"""), "incorrect"),
    Answer("ex1", "hostile: loops forever", _step("""
while True:
    pass
"""), "incorrect", loops=True),
    # --- ex2: move_batch ---------------------------------------------------------------------------
    Answer("ex2", "wrong: moves without keeping the results", _mover("""
token_ids, labels = batch
token_ids.to(device)
labels.to(device)
return token_ids, labels
"""), "incorrect"),
    Answer("ex2", "wrong: moves only the token ids", _mover("""
token_ids, labels = batch
return token_ids.to(device), labels
"""), "incorrect"),
    Answer("ex2", "wrong: moves to the notebook's global `device`", '''\
def move_batch(batch, _device):
    token_ids, labels = batch
    return token_ids.to(device), labels.to(device)
''', "incorrect"),
    Answer("ex2", "wrong: new empty tensors on the device (empty_like)", _mover("""
token_ids, labels = batch
return torch.empty_like(token_ids, device=device), torch.empty_like(labels, device=device)
"""), "incorrect"),
    Answer("ex2", "wrong: casts the labels to float", _mover("""
token_ids, labels = batch
return token_ids.to(device), labels.to(device).float()
"""), "incorrect"),
    Answer("ex2", "wrong: returns a dict", _mover("""
return {"token_ids": batch[0].to(device), "labels": batch[1].to(device)}
"""), "incorrect"),
    Answer("ex2", "wrong: returns the token ids only", _mover("""
return batch[0].to(device)
"""), "incorrect"),
    Answer("ex2", "wrong: calls .to() on the list", _mover("""
return batch.to(device)
"""), "incorrect"),
    Answer("ex2", "right: list comprehension", _mover("""
return [t.to(device) for t in batch]
"""), "correct"),
    Answer("ex2", "right: a generator expression, unpacked by the caller", _mover("""
return (t.to(device, non_blocking=True) for t in batch)
"""), "correct"),
    Answer("ex2", "right: a recursive mover that also handles dicts and nested lists", '''\
def move_batch(batch, device):
    if isinstance(batch, (list, tuple)):
        return [move_batch(x, device) for x in batch]
    if isinstance(batch, dict):
        return {k: move_batch(v, device) for k, v in batch.items()}
    return batch.to(device)
''', "correct"),
    Answer("ex2", "right: tuple(map(...))", _mover("""
return tuple(map(lambda t: t.to(device), batch))
"""), "correct"),
    Answer("ex2", "hostile: an object whose __iter__ never ends", '''\
class Endless:
    def __iter__(self):
        while True:
            yield torch.zeros(1)


def move_batch(batch, device):
    return Endless()
''', "incorrect"),
    Answer("ex2", "hostile: raises", _mover("""
raise RuntimeError("no")
"""), "incorrect"),
    Answer("ex2", "hostile: returns None", _mover("""
pass
"""), "incorrect"),
    # --- ex3: AutoMoveClassifier.forward -----------------------------------------------------------
    Answer("ex3", "wrong: moves to a hard-coded cuda", _forward("""
return super().forward(token_ids.to("cuda"))
"""), "incorrect"),
    Answer("ex3", "wrong: moves to the notebook's `device`", _forward("""
return super().forward(token_ids.to(device))
"""), "incorrect"),
    Answer("ex3", "wrong: moves without keeping the result", _forward("""
token_ids.to(next(self.parameters()).device)
return super().forward(token_ids)
"""), "incorrect"),
    Answer("ex3", "wrong: moves the model to the ids instead", _forward("""
self.to(token_ids.device)
return super().forward(token_ids)
"""), "incorrect"),
    Answer("ex3", "wrong: changes the logits", _forward("""
return super().forward(token_ids.to(next(self.parameters()).device)).softmax(dim=1)
"""), "incorrect"),
    Answer("ex3", "wrong: returns empty logits of the right shape", _forward("""
weight = self.fc.weight
return torch.empty(len(token_ids), weight.shape[0], device=weight.device)
"""), "incorrect"),
    Answer("ex3", "wrong: returns a tuple", _forward("""
return (super().forward(token_ids.to(next(self.parameters()).device)),)
"""), "incorrect"),
    Answer("ex3", "right: to the embedding weight's device", _forward("""
return super().forward(token_ids.to(self.embedding.weight.device))
"""), "correct"),
    Answer("ex3", "right: the blog post's version, moving only when needed", _forward("""
device = next(self.parameters()).device
if token_ids.device != device:
    token_ids = token_ids.to(device)
return self.fc(self.embedding(token_ids).mean(dim=1))
"""), "correct"),
    Answer("ex3", "right: to the linear layer's device", _forward("""
token_ids = token_ids.to(self.fc.weight.device)
return super().forward(token_ids)
"""), "correct"),
    Answer("ex3", "hostile: calls itself forever", _forward("""
return self(token_ids)
"""), "incorrect"),
    Answer("ex3", "hostile: raises", _forward("""
raise NotImplementedError
"""), "incorrect"),
]
