"""Answers learners might write for lab 05: wrong ones, right ones written differently, hostile ones."""

from harness import Answer

LAB = "05-inside"

STANDARDIZE = '''\
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        {init}

    def forward(self, x):
        {forward}
'''


def standardize(init: str, forward: str = "return (x - self.mean) / self.std") -> str:
    """An answer to exercise 1 with its own __init__ body and forward."""
    return STANDARDIZE.format(init=init, forward=forward)


CLASSIFIER = '''\
class SequenceClassifier(nn.Module):
    def __init__(self, mean, std, hidden_size=16, classes=2):
        super().__init__()
        self.standardize = Standardize(mean, std)
        self.gru = nn.GRU(FEATURES + 1, hidden_size, batch_first=True)
        {head}

    def forward(self, x):
        x = self.standardize(x)
        batch, steps, _ = x.shape
        {time}
        x = torch.cat([x, time.expand(batch, steps).unsqueeze(-1)], dim=-1)
        {gru}
        {out}
'''
HEAD = "self.head = nn.Linear(hidden_size, classes)"
TIME = "time = torch.arange(steps, device=x.device, dtype=x.dtype) / steps"
GRU = "_, last = self.gru(x, start_state(x, self.gru.hidden_size))"
OUT = "return self.head(last[-1])"


def classifier(head: str = HEAD, time: str = TIME, gru: str = GRU, out: str = OUT) -> str:
    """An answer to exercise 3, the solution with one or more lines changed."""
    return CLASSIFIER.format(head=head, time=time, gru=gru, out=out)


ANSWERS = [
    # --- exercise 1: Standardize ------------------------------------------------------------------------
    Answer("ex1", "wrong: plain tensor attributes (the first draft)",
           standardize("self.mean = mean\n        self.std = std"), "incorrect"),
    Answer("ex1", "wrong: nn.Parameter (moves, but would be trained)",
           standardize("self.mean = nn.Parameter(mean)\n        self.std = nn.Parameter(std)"), "incorrect"),
    Answer("ex1", "right: parameters with requires_grad=False (moved, saved, never trained)",
           standardize("self.mean = nn.Parameter(mean, requires_grad=False)\n"
                       "        self.std = nn.Parameter(std, requires_grad=False)"), "correct"),
    Answer("ex1", "wrong: persistent=False (not in the state_dict: the proof's reload loses them)",
           standardize('self.register_buffer("mean", mean, persistent=False)\n'
                       '        self.register_buffer("std", std, persistent=False)'), "incorrect"),
    Answer("ex1", "wrong: the blog post's auto-move in forward (works, but nothing is saved)",
           standardize("self.mean = mean\n        self.std = std",
                       "return (x - self.mean.to(x.device)) / self.std.to(x.device)"), "incorrect"),
    Answer("ex1", "wrong: floats from the statistics (.tolist()) are not saved either",
           standardize("self.mean = mean.tolist()\n        self.std = std.tolist()",
                       "return (x - torch.tensor(self.mean, device=x.device)) / torch.tensor(self.std, "
                       "device=x.device)"), "incorrect"),
    Answer("ex1", "wrong: multiplies by std",
           standardize('self.register_buffer("mean", mean)\n        self.register_buffer("std", std)',
                       "return (x - self.mean) * self.std"), "incorrect"),
    Answer("ex1", "wrong: a function, not a module", '''\
def Standardize(mean, std):
    return lambda x: (x - mean) / std
''', "incorrect"),
    Answer("ex1", "hostile: __init__ raises", standardize("raise RuntimeError('nope')"), "incorrect"),
    Answer("ex1", "hostile: forward loops forever",
           standardize('self.register_buffer("mean", mean)\n        self.register_buffer("std", std)',
                       "while True:\n            pass"), "incorrect", loops=True),
    Answer("ex1", "right: buffers under other names",
           standardize('self.register_buffer("center", mean)\n        self.register_buffer("scale", std)',
                       "return (x - self.center) / self.scale"), "correct"),
    Answer("ex1", "right: buffers given by attribute assignment of registered clones", '''\
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.register_buffer("mean", torch.empty_like(mean))
        self.register_buffer("std", torch.empty_like(std))
        self.mean = mean.clone()
        self.std = std.clone()

    def forward(self, x):
        return x.sub(self.mean).div(self.std)
''', "correct"),
    Answer("ex1", "right: one stacked buffer (a checkpoint brings it back like two)",
           standardize('self.register_buffer("stats", torch.stack([mean, std]))',
                       "return (x - self.stats[0]) / self.stats[1]"), "correct"),
    Answer("ex1", "right: buffers registered from float64 copies, cast back in forward",
           standardize('self.register_buffer("mean", mean.double())\n        self.register_buffer("std", std.double())',
                       "return ((x - self.mean) / self.std).to(x.dtype)"), "correct"),
    Answer("ex1", "hostile: buffers for meta and the checkpoint, plain attributes everywhere else",
           standardize('self.register_buffer("saved_mean", mean.clone())\n'
                       '        self.register_buffer("saved_std", std.clone())\n'
                       "        self.mean, self.std = mean, std",
                       "if x.is_meta:\n            return (x - self.saved_mean) / self.saved_std\n"
                       "        return (x - self.mean) / self.std"), "incorrect"),
    Answer("ex1", "hostile: buffers saved, plain copies moved in forward (the blog post's fix, disguised)",
           standardize('self.register_buffer("mean", mean)\n        self.register_buffer("std", std)\n'
                       "        self.copies = [mean.clone(), std.clone()]",
                       "m, s = (t.to(x.device) for t in self.copies)\n        return (x - m) / s"), "incorrect"),
    # --- exercise 2: start_state ------------------------------------------------------------------------
    Answer("ex2", "wrong: the input's device but the default dtype", '''\
def start_state(x, hidden_size):
    return torch.zeros(1, x.shape[0], hidden_size, device=x.device)
''', "incorrect"),
    Answer("ex2", "hostile: special-cases meta, CPU float32 zeros elsewhere", '''\
def start_state(x, hidden_size):
    if x.is_meta:
        return x.new_zeros(1, x.shape[0], hidden_size)
    return torch.zeros(1, x.shape[0], hidden_size)
''', "incorrect"),
    Answer("ex2", "right: zeros moved with .to(x) (device and dtype of x)", '''\
def start_state(x, hidden_size):
    return torch.zeros(1, len(x), hidden_size).to(x)
''', "correct"),
    Answer("ex2", "wrong: torch.zeros without device=", '''\
def start_state(x, hidden_size):
    return torch.zeros(1, x.shape[0], hidden_size)
''', "incorrect"),
    Answer("ex2", "wrong: the notebook's global `device`", '''\
def start_state(x, hidden_size):
    return torch.zeros(1, x.shape[0], hidden_size, device=device)
''', "incorrect"),
    Answer("ex2", "wrong: a fixed \"cuda\" if available", '''\
def start_state(x, hidden_size):
    where = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.zeros(1, x.shape[0], hidden_size, device=where)
''', "incorrect"),
    Answer("ex2", "wrong: forgets the layers dimension", '''\
def start_state(x, hidden_size):
    return x.new_zeros(x.shape[0], hidden_size)
''', "incorrect"),
    Answer("ex2", "wrong: random initial state", '''\
def start_state(x, hidden_size):
    return torch.randn(1, x.shape[0], hidden_size, device=x.device)
''', "incorrect"),
    Answer("ex2", "wrong: batch taken from the steps dimension", '''\
def start_state(x, hidden_size):
    return x.new_zeros(1, x.shape[1], hidden_size)
''', "incorrect"),
    Answer("ex2", "hostile: returns a string", '''\
def start_state(x, hidden_size):
    return "zeros"
''', "incorrect"),
    Answer("ex2", "right: torch.zeros with device and dtype of x", '''\
def start_state(x, hidden_size):
    return torch.zeros(1, x.size(0), hidden_size, device=x.device, dtype=x.dtype)
''', "correct"),
    Answer("ex2", "right: zeros_like of a slice, expanded", '''\
def start_state(x, hidden_size):
    return torch.zeros_like(x[:, 0, :1]).repeat(1, hidden_size).unsqueeze(0)
''', "correct"),
    # --- exercise 3: SequenceClassifier -------------------------------------------------------------------
    Answer("ex3", "wrong: the first draft as it was", '''\
SequenceClassifier = FirstDraft
''', "incorrect"),
    Answer("ex3", "wrong: torch.arange without device=", classifier(time="time = torch.arange(steps) / steps"),
           "incorrect"),
    Answer("ex3", "wrong: the hidden state made on the CPU",
           classifier(gru="_, last = self.gru(x, torch.zeros(1, batch, self.gru.hidden_size))"), "incorrect"),
    Answer("ex3", "wrong: the head still built in forward",
           classifier(head="self.classes = classes",
                      out="return nn.Linear(self.gru.hidden_size, self.classes).to(x.device)(last[-1])"),
           "incorrect"),
    Answer("ex3", "wrong: the head built in forward with a fixed seed (repeatable, still untrained)",
           classifier(head="self.classes = classes",
                      out="torch.manual_seed(0)\n        "
                      "return nn.Linear(self.gru.hidden_size, self.classes).to(x.device)(last[-1])"),
           "incorrect"),
    Answer("ex3", "wrong: the time feature on the global `device`",
           classifier(time="time = torch.arange(steps, device=device) / steps"), "incorrect"),
    Answer("ex3", "wrong: noise added in forward, made on the CPU",
           classifier(out="return self.head(last[-1] + 0.01 * torch.randn(batch, self.gru.hidden_size))"),
           "incorrect"),
    Answer("ex3", "wrong: the head built lazily on the first call (after .to() and the optimizer)",
           classifier(head="self.classes = classes",
                      out="if not hasattr(self, 'head'):\n"
                      "            self.head = nn.Linear(self.gru.hidden_size, self.classes).to(x.device)\n"
                      "        return self.head(last[-1])"), "incorrect"),
    Answer("ex3", "right: the statistics as one stacked buffer of the classifier itself",
           classifier(head=HEAD + '\n        self.register_buffer("stats", torch.stack([mean, std]))\n'
                      "        self.standardize = nn.Identity()",
                      time="x = (x - self.stats[0]) / self.stats[1]\n        " + TIME), "correct"),
    Answer("ex3", "hostile: forward returns None", classifier(out="return None"), "incorrect"),
    Answer("ex3", "right: no hidden state at all (zeros where x is)", classifier(gru="_, last = self.gru(x)"),
           "correct"),
    Answer("ex3", "right: the time feature as a non-persistent buffer",
           classifier(head=HEAD + '\n        self.register_buffer("steps", torch.arange(64.0), persistent=False)',
                      time="time = self.steps[:steps] / steps"), "correct"),
    Answer("ex3", "right: made on the CPU and moved with .to(x.device)",
           classifier(time="time = (torch.arange(steps) / steps).to(x.device)"), "correct"),
]
