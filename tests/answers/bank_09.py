"""Answers learners might write for lab 09: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "09-debugging"

EMBED = '''\
class FixedEmbed(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        {init}

    def forward(self, ids):
        {forward}
'''
TABLE = 'self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)'
ADD = "return self.tok(ids) + self.pos[: ids.shape[1]]"


def embed(init: str = TABLE, forward: str = ADD) -> str:
    """An answer to exercise 1 with its own table line and forward."""
    return EMBED.format(init=init, forward=forward)


ATTENTION = '''\
class FixedAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        {layers}

    def forward(self, x):
        batch, steps, dim = x.shape
        q, k, v = self.qkv(x).view(batch, steps, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        {mask}
        scores = scores.masked_fill(mask, float("-inf"))
        y = scores.softmax(dim=-1) @ v
        {out}
'''
LAYERS = "self.qkv = nn.Linear(dim, 3 * dim)\n        self.out = nn.Linear(dim, dim)"
MASK = "mask = torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)"
OUT = "return self.out(y.transpose(1, 2).reshape(batch, steps, dim))"


def attention(mask: str = MASK, layers: str = LAYERS, out: str = OUT) -> str:
    """An answer to exercise 2, the solution with one or more lines changed."""
    return ATTENTION.format(mask=mask, layers=layers, out=out)


RESUME = '''\
def resume(path, device):
    """The fixed model and its Adam optimizer from a checkpoint, everything on `device`."""
{body}
'''
RIGHT_ORDER = '''\
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = build_model().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer'''


def resume(body: str = RIGHT_ORDER) -> str:
    """An answer to exercise 3 with its own body."""
    return RESUME.format(body=body)


ANSWERS = [
    # --- exercise 1: FixedEmbed -------------------------------------------------------------------------
    Answer("ex1", "wrong: the plain attribute, unchanged", embed("self.pos = sinusoids(max_len, dim)"), "incorrect"),
    Answer("ex1", "wrong: a persistent buffer (the checkpoint has no embed.pos: the resume fails)",
           embed('self.register_buffer("pos", sinusoids(max_len, dim))'), "incorrect"),
    Answer("ex1", "wrong: a frozen parameter (in the state_dict: the resume fails)",
           embed("self.pos = nn.Parameter(sinusoids(max_len, dim), requires_grad=False)"), "incorrect"),
    Answer("ex1", "wrong: a trained parameter", embed("self.pos = nn.Parameter(sinusoids(max_len, dim))"),
           "incorrect"),
    Answer("ex1", "wrong: the table moved to a global device at construction",
           embed('self.pos = sinusoids(max_len, dim).to(device)'), "incorrect"),
    Answer("ex1", "wrong: the table moved to `target` at construction (meta on this machine)",
           embed('self.pos = sinusoids(max_len, dim).to(target)'), "incorrect"),
    Answer("ex1", "wrong: .cuda() on the table (fails without a GPU)",
           embed("self.pos = sinusoids(max_len, dim).cuda()"), "incorrect"),
    Answer("ex1", "wrong: the whole table added, whatever the length",
           embed(forward="return self.tok(ids) + self.pos[: ids.shape[1]].sum(0)"), "incorrect"),
    Answer("ex1", "wrong: the output sent back to the CPU",
           embed(forward="return (self.tok(ids) + self.pos[: ids.shape[1]]).cpu()"), "incorrect"),
    Answer("ex1", "wrong: the embedding layer renamed (the checkpoint's keys no longer match)",
           EMBED.replace("self.tok = nn.Embedding", "self.token = nn.Embedding").format(
               init=TABLE, forward="return self.token(ids) + self.pos[: ids.shape[1]]"), "incorrect"),
    Answer("ex1", "right: the solution's buffer under another name",
           embed('self.register_buffer("table", sinusoids(max_len, dim), persistent=False)',
                 "return self.tok(ids) + self.table[: ids.shape[1]]"), "correct"),
    Answer("ex1", "right: the table recomputed in forward on the ids' device",
           embed("self.dim = dim", "return self.tok(ids) + sinusoids(ids.shape[1], self.dim).to(ids.device)"),
           "correct"),
    Answer("ex1", "right: a subclass of the old Embed that re-registers pos as a non-persistent buffer", '''\
class FixedEmbed(Embed):
    def __init__(self, vocab, dim, max_len):
        super().__init__(vocab, dim, max_len)
        table = self.pos
        del self.pos
        self.register_buffer("pos", table, persistent=False)
''', "correct"),
    Answer("ex1", "wrong: the plain table moved in forward at every call (the fix step 5 calls wrong)",
           embed("self.pos = sinusoids(max_len, dim)",
                 "return self.tok(ids) + self.pos[: ids.shape[1]].to(ids.device)"),
           "incorrect"),
    Answer("ex1", "wrong: .to() overridden to move the plain table (a parent's .to() never calls it)", '''\
class FixedEmbed(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = sinusoids(max_len, dim)

    def to(self, *args, **kwargs):
        self.pos = self.pos.to(*args, **kwargs)
        return super().to(*args, **kwargs)

    def forward(self, ids):
        return self.tok(ids) + self.pos[: ids.shape[1]]
''', "incorrect"),
    Answer("ex1", "right: _apply overridden to move the plain table (what every .to() goes through)", '''\
class FixedEmbed(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = sinusoids(max_len, dim)

    def _apply(self, fn, *args, **kwargs):
        self.pos = fn(self.pos)
        return super()._apply(fn, *args, **kwargs)

    def forward(self, ids):
        return self.tok(ids) + self.pos[: ids.shape[1]]
''', "correct"),
    Answer("ex1", "right: a non-persistent buffer sliced with narrow",
           embed(forward="return self.tok(ids) + self.pos.narrow(0, 0, ids.size(1))"), "correct"),
    Answer("ex1", "hostile: __init__ raises", embed("raise RuntimeError('nope')"), "incorrect"),
    Answer("ex1", "hostile: forward loops forever", embed(forward="while True:\n            pass"), "incorrect",
           loops=True),
    Answer("ex1", "hostile: not a class", "FixedEmbed = 'register_buffer'\n", "incorrect"),
    # --- exercise 2: FixedAttention ---------------------------------------------------------------------
    Answer("ex2", "wrong: the mask without a device (the bug itself)",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool).triu(1)"), "incorrect"),
    Answer("ex2", "wrong: the mask on a global device",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool, device=device).triu(1)"), "incorrect"),
    Answer("ex2", "wrong: the mask moved to `target` (meta on this machine)",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool).triu(1).to(target)"), "incorrect"),
    Answer("ex2", "wrong: the scores sent to the CPU instead of the mask to the GPU",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool).triu(1)\n        scores = scores.cpu()"),
           "incorrect"),
    Answer("ex2", "wrong: tril instead of triu (the model sees the future, not the past)",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool, device=x.device).tril(-1)"), "incorrect"),
    Answer("ex2", "wrong: no mask at all",
           attention("mask = torch.zeros(steps, steps, dtype=torch.bool, device=x.device)"), "incorrect"),
    Answer("ex2", "wrong: a persistent mask buffer (the checkpoint has no such key)",
           attention("mask = self.mask[:steps, :steps]",
                     LAYERS + "\n        self.register_buffer(\"mask\", torch.ones(16, 16, dtype=torch.bool).triu(1))"),
           "incorrect"),
    Answer("ex2", "wrong: the output layer built in forward",
           attention(layers="self.qkv = nn.Linear(dim, 3 * dim)\n        self.out = nn.Linear(dim, dim)",
                     out="return nn.Linear(dim, dim).to(x.device)(y.transpose(1, 2).reshape(batch, steps, dim))"),
           "incorrect"),
    Answer("ex2", "right: a non-persistent mask buffer sliced to the length",
           attention("mask = self.mask[:steps, :steps]",
                     LAYERS + "\n        self.register_buffer(\"mask\", torch.ones(16, 16, dtype=torch.bool).triu(1), "
                     "persistent=False)"), "correct"),
    Answer("ex2", "right: the mask made on the scores' device with tril and ~",
           attention("mask = ~torch.ones(steps, steps, dtype=torch.bool, device=scores.device).tril()"), "correct"),
    Answer("ex2", "right: the CPU mask moved to x.device",
           attention("mask = torch.ones(steps, steps, dtype=torch.bool).triu(1).to(x.device)"), "correct"),
    Answer("ex2", "right: scaled_dot_product_attention with is_causal=True", '''\
class FixedAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, steps, dim = x.shape
        q, k, v = self.qkv(x).view(batch, steps, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(batch, steps, dim))
''', "correct"),
    Answer("ex2", "wrong: a plain mask made in __init__, moved in forward at every call",
           attention("mask = self.mask[:steps, :steps].to(x.device)",
                     layers=LAYERS + "\n        self.mask = torch.ones(64, 64, dtype=torch.bool).triu(1)"),
           "incorrect"),
    Answer("ex2", "hostile: forward returns None", attention(out="return None"), "incorrect"),
    Answer("ex2", "hostile: __init__ loops forever", attention(layers="while True:\n            pass"), "incorrect",
           loops=True),
    # --- exercise 3: resume -----------------------------------------------------------------------------
    Answer("ex3", "wrong: the colleague's order (state loaded before the move)", resume('''\
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    return model, optimizer'''), "incorrect"),
    Answer("ex3", "wrong: the colleague's function, unchanged",
           "resume = start_training\n", "incorrect"),
    Answer("ex3", "wrong: the mystery model instead of build_model()",
           resume(RIGHT_ORDER.replace("build_model()", "MysteryModel()")), "incorrect"),
    Answer("ex3", "wrong: the optimizer's state never loaded",
           resume(RIGHT_ORDER.replace('    optimizer.load_state_dict(checkpoint["optimizer"])\n', "")), "incorrect"),
    Answer("ex3", "wrong: moved to the global device, not the argument",
           resume(RIGHT_ORDER.replace("build_model().to(device)", "build_model().to(globals()['device'])")),
           "incorrect"),
    Answer("ex3", "wrong: SGD instead of the Adam that wrote the state",
           resume(RIGHT_ORDER.replace("torch.optim.Adam(", "torch.optim.SGD(")), "incorrect"),
    Answer("ex3", "wrong: the state moved after the fact, optimizer built before the move", resume('''\
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    for state in optimizer.state.values():
        for key, value in state.items():
            if torch.is_tensor(value) and key != "step":
                state[key] = value.to(device)
    return model, optimizer'''), "incorrect"),
    Answer("ex3", "wrong: returns only the model",
           resume(RIGHT_ORDER.replace("return model, optimizer", "return model")), "incorrect"),
    Answer("ex3", "wrong: the weights never loaded",
           resume(RIGHT_ORDER.replace('    model.load_state_dict(checkpoint["model"])\n', "")), "incorrect"),
    Answer("ex3", "right: the checkpoint read on the CPU (load_state_dict moves the state)",
           resume(RIGHT_ORDER.replace("map_location=device", 'map_location="cpu"')), "correct"),
    Answer("ex3", "right: weights loaded before the move, optimizer built and loaded after it", resume('''\
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = build_model()
    model.load_state_dict(checkpoint["model"])
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return model, optimizer'''), "correct"),
    Answer("ex3", "right: the learning rate left to the checkpoint", resume(
        RIGHT_ORDER.replace("torch.optim.Adam(model.parameters(), lr=3e-3)", "torch.optim.Adam(model.parameters())")),
        "correct"),
    Answer("ex3", "hostile: raises", resume("    raise RuntimeError('nope')"), "incorrect"),
    Answer("ex3", "hostile: loops forever", resume("    while True:\n        pass"), "incorrect", loops=True),
    Answer("ex3", "hostile: returns junk", resume("    return 'model', 'optimizer'"), "incorrect"),
]
