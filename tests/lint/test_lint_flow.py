"""The device flow the rules read: where a name may point through branches, calls, `self` attributes, helpers
and the project's own modules; and what each new rule leaves alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from devicelab.lint import Config, lint_paths, lint_text, main

HEAD = ("import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "import torch.distributed as dist\n")


def codes(body: str) -> list[str]:
    return [p.code for p in lint_text(HEAD + body)]


LOOP = "for x, y in loader:\n    print(model(x))\n"


def test_a_device_picked_in_if_else_is_either_so_a_model_moved_there_counts_as_moved() -> None:
    picked = "if torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'\n"
    model = "loader = torch.utils.data.DataLoader(data)\nmodel = nn.Linear(8, 2)\nmodel.to(device)\n"
    assert codes(picked + model + LOOP) == ["DL301"]  # the last branch ("cpu") no longer wins
    assert codes(picked + model + "net = nn.DataParallel(model)\n") == []


def test_a_branch_that_returns_does_not_reach_what_follows() -> None:
    body = ("def pick(force_cpu):\n    if force_cpu:\n        device = 'cpu'\n        return None\n"
            "    device = 'cuda'\n    model = nn.Linear(2, 2).to(device)\n    return nn.DataParallel(model)\n")
    assert codes(body) == []


def test_a_model_moved_in_one_branch_only_is_not_unmoved() -> None:
    body = "model = nn.Linear(2, 2)\nif args.gpu:\n    model.cuda()\nnet = nn.DataParallel(model)\n"
    assert codes("import argparse\nargs = argparse.Namespace()\n" + body) == []


def test_a_model_handed_to_train_by_every_caller_moved_is_moved_there() -> None:
    train = "def train(model, loader):\n    for x, y in loader:\n        model(x)\n"
    call = "loader = torch.utils.data.DataLoader(data)\nnet = nn.Linear(8, 2).to('cuda')\ntrain(net, loader)\n"
    assert codes(train + call) == ["DL301"]
    # a caller whose model stays on the CPU: the calls disagree on nothing the rule needs, still no move
    cpu_call = "loader = torch.utils.data.DataLoader(data)\nnet = nn.Linear(8, 2)\ntrain(net, loader)\n"
    assert codes(train + cpu_call) == []
    # passed around (a callback): called from who knows where, so its parameters stay unknown
    assert codes(train + call + "callbacks = [train]\n") == []


def test_a_trainer_keeps_its_model_on_self() -> None:
    trainer = ("class Trainer:\n    def __init__(self, model, loader):\n        self.model = model\n"
               "        self.loader = loader\n\n    def setup(self):\n        self.model.to('cuda')\n\n"
               "    def fit(self):\n        for x, y in self.loader:\n            self.model(x)\n")
    assert codes(trainer) == ["DL301"]
    assert codes(trainer.replace("self.model(x)", "self.model(x.cuda())")) == []
    outside = trainer + "t = Trainer(None, None)\nt.model = lambda x: x\n"  # set from outside: unknown
    assert codes(outside) == []


def test_a_helper_that_returns_a_moved_model() -> None:
    helper = "def build(device):\n    model = nn.Linear(8, 2)\n    return model.to(device)\n\n\n"
    body = "loader = torch.utils.data.DataLoader(data)\nmodel = build('cuda')\n" + LOOP
    assert codes(helper + body) == ["DL301"]


def test_to_the_device_of_another_tensor_is_where_that_tensor_is() -> None:
    model = "model = nn.Linear(8, 2).to('cuda')\n"
    assert codes(model + "ref = torch.randn(2, 8)\nx = torch.randn(2, 8).to(ref.device)\nmodel(x)\n") == ["DL301"]
    assert codes(model + "ref = model(torch.randn(2, 8).to('cuda'))\nx = torch.randn(2, 8).to(ref.device)\n"
                         "model(x)\n") == []
    # the device of something unknown: unknown, nothing said either way
    assert codes("def f(ref):\n    x = torch.randn(2, 8).to(ref.device)\n    return x.numpy()\n") == []


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


MODELS = ("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.fc = nn.Linear(8, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
          "def build():\n    return Net()\n")
TRAIN = ("import torch\nimport torch.nn as nn\n{imports}\n\nloader = torch.utils.data.DataLoader(data)\n"
         "model = Net()\nmodel.to('cuda')\nfor x, y in loader:\n    model(x)\nbare = build()\n"
         "wrapped = nn.DataParallel(bare)\n")


@pytest.mark.parametrize("imports", ["from models import *", "from models import Net, build",
                                     "from .models import Net, build"])
def test_models_imported_from_the_projects_own_modules(tmp_path: Path, imports: str) -> None:
    root = project(tmp_path, {"models.py": MODELS, "train.py": TRAIN.format(imports=imports)})
    found = [(p.line, p.code) for p in lint_paths([root / "train.py"], Config())]
    assert found == [(9, "DL301"), (11, "DL201")]


def test_a_star_import_of_a_package_that_re_exports_its_modules(tmp_path: Path) -> None:
    root = project(tmp_path, {"pkg/__init__.py": "", "pkg/nets/__init__.py": "from .models import *\n",
                              "pkg/nets/models.py": MODELS,
                              "pkg/train.py": TRAIN.format(imports="from .nets import *")})
    found = [(p.line, p.code) for p in lint_paths([root / "pkg" / "train.py"], Config())]
    assert found == [(9, "DL301"), (11, "DL201")]


def test_an_import_the_project_does_not_hold_stays_unknown(tmp_path: Path) -> None:
    root = project(tmp_path, {"train.py": TRAIN.format(imports="from somewhere_else import Net, build")})
    assert lint_paths([root / "train.py"], Config()) == []


@pytest.mark.parametrize("body", [
    "def loss(pred, target):\n    w = torch.ones(pred.shape[1])\n    return F.cross_entropy(pred, target, weight=w)\n",
    "def nms(boxes, scores):\n    keep = torch.zeros(len(boxes), dtype=torch.bool)\n"
    "    return scores.view(-1) * keep\n",
    "def step(model, x, device):\n    x = x.to(device)\n    mask = torch.ones(4)\n    return model(x) * mask\n",
    # the CPU index given by keyword, as much as by position
    "def decode(logits, n):\n    return logits.view(-1, 4).index_select(dim=0, index=torch.arange(n))\n",
])
def test_dl504_finds_a_factory_that_meets_the_device(body: str) -> None:
    assert codes(body) == ["DL504"]


@pytest.mark.parametrize("body", [
    # a parameter of unknown place in a function whose name says nothing about a model's outputs
    "def combine(a, b):\n    return a.view(-1) + torch.ones(4)\n",
    # the same loss called by the file with CPU tensors only
    "def loss(pred, target):\n    return (pred.view(-1) - torch.ones(4)).abs().mean()\n\n\n"
    "print(loss(torch.randn(4), None))\n",
    # used for Python only, shapes, NumPy
    "def loss(pred):\n    n = torch.randint(1, 3, (1,)).item()\n    return pred.view(-1)[:n]\n",
    "def metric(pred):\n    return np.array(torch.arange(3)) + pred.shape[0]\n",
    # moved first, or made where it is used
    "def loss(pred):\n    t = torch.ones(3).cuda()\n    return pred.view(-1) * t\n",
    "def loss(pred):\n    return pred.view(-1) * torch.ones(3, device=pred.device)\n",
    "def loss(pred):\n    with torch.device(pred.device):\n        t = torch.ones(3)\n    return pred.view(-1) * t\n",
    # a CPU index into a tensor on the device works
    "def loss(pred):\n    return pred.view(4, 4)[torch.arange(4), torch.arange(4)]\n",
    # the whole file makes tensors on a default device
    "torch.set_default_device('cuda')\n\n\ndef loss(pred):\n    return pred.view(-1) * torch.ones(3)\n",
])
def test_dl504_leaves_alone(body: str) -> None:
    assert codes(body) == []


def test_dl504_fix_makes_the_tensor_where_the_other_one_is(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    script = tmp_path / "loss.py"
    script.write_text(HEAD + "def loss(pred):\n    t = torch.ones(3)\n    return pred.view(-1) * t\n", encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--diff"]) == 1
    assert "+    t = torch.ones(3, device=pred.device)" in capsys.readouterr().out
    script.write_text(HEAD + "def loss(pred):\n    t = torch.from_numpy(np.ones(3))\n    return pred.view(-1) * t\n",
                      encoding="utf-8")
    assert main([str(script), "--config", "/dev/null", "--diff"]) == 1
    assert "+    t =" not in capsys.readouterr().out  # torch.from_numpy takes no device=: no fix


@pytest.mark.parametrize("body", [
    "dist.init_process_group('gloo')\nt = torch.zeros(1)\ndist.all_reduce(t)\n",  # gloo takes CPU tensors
    "dist.init_process_group(backend=args.backend)\nt = torch.zeros(1)\ndist.all_reduce(t)\n",  # chosen at run time
    "torch.cuda.set_device(rank)\ndist.init_process_group('nccl')\ndist.all_reduce(loss)\n",  # unknown place
    "model = nn.Linear(2, 2)\nddp = nn.parallel.DistributedDataParallel(model)\n",  # no device_ids
    "model = nn.Linear(2, 2).to('cuda')\nddp = nn.parallel.DistributedDataParallel(model, device_ids=[0])\n",
    "def wrap(model, rank):\n    return nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n",
])
def test_ddp_rules_leave_alone(body: str) -> None:
    assert codes("import argparse\nargs = argparse.Namespace()\n" + body) == []


@pytest.mark.parametrize("body", [
    "def run(model):\n    return model.cuda()\n",  # a library: only definitions
    "model = nn.Linear(2, 2)\nif torch.cuda.is_available():\n    model.cuda()\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--no-cuda', action='store_true')\n"
    "model = nn.Linear(2, 2).cuda()\nprint(model)\n",
    "model = nn.Linear(2, 2).to('cuda')\nprint(model)\n",  # .to('cuda') is left alone (see the rule)
    "torch.cuda.synchronize()\nprint(torch.cuda.memory_allocated())\n",
])
def test_dl103_leaves_alone(body: str) -> None:
    assert codes(body) == []


def test_dl103_is_said_once_per_file_and_at_each_cuda_only_load(tmp_path) -> None:
    from devicelab.lint import lint_file

    body = "model = nn.Linear(2, 2).cuda()\nx = torch.randn(2).cuda()\na = torch.load('a.pt', map_location='cuda')\n"
    (tmp_path / "train.py").write_text(HEAD + body)
    # a script beside it runs on machines without a GPU: so is this one meant to
    (tmp_path / "demo.py").write_text("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert [(p.line, p.code) for p in lint_file(tmp_path / "train.py")] == [(6, "DL103"), (8, "DL103")]


@pytest.mark.parametrize("body", [
    "x = torch.randn(3)\nprint(np.array(x))\n",  # on the CPU
    "def show(t):\n    return np.asarray(t)\n",  # unknown
    "x = torch.randn(3).to('cuda')\nprint(np.array(x.cpu()), np.asarray(x.tolist()))\n",
])
def test_dl102_leaves_numpy_of_a_cpu_or_unknown_tensor_alone(body: str) -> None:
    assert codes(body) == []


MOVED = "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel = nn.Sequential(nn.Linear(4, 2)).to(device)\n"


@pytest.mark.parametrize("read", [
    "w = model[0].weight.detach().numpy()\n",
    "for p in model.parameters():\n    print(p.data.numpy())\n",
    "for name, p in model.named_parameters():\n    print(name, p.grad.numpy())\n",
    "v = nn.utils.parameters_to_vector(model.parameters()).detach().numpy()\n",
    "b = model.state_dict()['0.bias'].numpy()\n",
    "import matplotlib.pyplot as plt\nplt.plot(model[0].bias.detach())\n",
])
def test_dl102_reads_a_moved_models_own_tensors_as_on_the_device(read: str) -> None:
    assert codes(MOVED + read) == ["DL102"]


@pytest.mark.parametrize("body", [
    # never moved, moved back in place, or copied to the CPU first
    "model = nn.Linear(4, 2)\nprint(model.weight.detach().numpy())\n",
    MOVED + "model.cpu()\nprint(model[0].weight.detach().numpy())\n",
    MOVED + "w = {k: v.cpu().numpy() for k, v in model.state_dict().items()}\n",
    MOVED + "print(model[0].weight.detach().cpu().numpy())\n",
])
def test_dl102_leaves_a_models_tensors_alone_where_they_are_on_the_cpu(body: str) -> None:
    assert codes(body) == []


DETECT = ("def detect(model, img, use_cuda):\n"
          "    if isinstance(img, np.ndarray):\n        img = torch.from_numpy(img).float()\n"
          "    else:\n        print('unknown image type')\n        exit(-1)\n"
          "    if use_cuda:\n        img = img.cuda()\n"
          "    img = torch.autograd.Variable(img)\n"
          "    outputs = model(img)\n    found = []\n"
          "    for output in outputs:\n        found.append(output.data.numpy())\n    return found\n")


def test_dl102_follows_an_input_moved_in_a_branch_through_an_exit_a_variable_and_a_loop() -> None:
    # a branch that calls exit() reaches nothing after it; Variable(x) is x; the items of a tensor on the device
    # (the outputs of a model fed on the device) are on the device too
    assert codes(DETECT) == ["DL102"]
    assert codes(DETECT.replace("output.data.numpy()", "output.data.cpu().numpy()")) == []
    assert codes(DETECT.replace("        img = img.cuda()\n", "        pass\n")) == []  # never moved
    # a branch that goes on (no exit) leaves img unknown there: nothing is said
    assert codes(DETECT.replace("        exit(-1)\n", "")) == []
    for ending in ("sys.exit(1)", "quit()", "os._exit(2)"):
        assert codes("import os, sys\n" + DETECT.replace("exit(-1)", ending)) == ["DL102"], ending


@pytest.mark.parametrize("body, found", [
    # the outputs of a model fed on the device, unpacked or run through a comprehension, are on the device
    ("def f(model, x):\n    logits, feats = model(x.cuda())\n    return feats.numpy()\n", ["DL102"]),
    ("def f(model, x):\n    outs = model(x.cuda())\n    return [o.detach().numpy() for o in outs]\n", ["DL102"]),
    ("def f(model, x):\n    outs = model(x.cuda())\n    return {i: o.numpy() for i, o in enumerate(outs)}\n", []),
    ("def f(model, x):\n    outs = model(x.cuda())\n    return [o.cpu().numpy() for o in outs]\n", []),
    ("def f(model, x):\n    logits, feats = model(x)\n    return feats.numpy()\n", []),  # fed unknown
    # a comprehension's name is its own: the same name outside it keeps what it held
    ("def f(model, x, o):\n    outs = model(x.cuda())\n    kept = [o for o in outs]\n    return o.numpy()\n", []),
    ("def f(model, x, items):\n    o = model(x.cuda())\n    return [o.numpy() for o in items]\n", []),
    ("import torch.nn as nn\nmodel = nn.Linear(2, 2).cuda()\nw = [p.numpy() for p in model.parameters()]\n",
     ["DL102"]),
])
def test_dl102_follows_a_models_outputs_through_unpacking_and_comprehensions(body: str, found: list[str]) -> None:
    assert codes(body) == found


def test_dl702_follows_a_model_and_its_optimizer_kept_on_self() -> None:
    init = ("class Trainer:\n    def __init__(self, path):\n        self.model = nn.Linear(3, 3)\n"
            "        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)\n"
            "        self.opt.load_state_dict(torch.load(path, map_location='cpu')['opt'])\n"
            "        self.model = self.model.to(torch.device('cuda', 0))\n")
    assert codes(init) == ["DL702"]
    assert codes(init.replace("self.model = self.model.to(", "self.model.to(")) == ["DL702"]  # moved in place
    load = "        self.opt.load_state_dict(torch.load(path, map_location='cpu')['opt'])\n"
    moved_first = init.replace(load, "") + load  # the model moved, then the optimizer's state loaded
    assert codes(moved_first) == []
    # kept on self by one method and moved by another: each method is read on its own, so nothing is said
    split = init.replace("        self.model = self.model.to(", "\n    def setup(self):\n        self.model.to(")
    assert codes(split) == []
    # a name that only looks like one kept on self (another object's attribute) is not followed
    assert codes(init.replace("self.", "trainer.").replace("(trainer, path)", "(self, path)")) == []


def test_dl201_finds_a_model_built_inside_the_wrap() -> None:
    net = "class Net(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
    body = "model = nn.DataParallel(Net())\nprint(model(torch.randn(2, 2).to('cuda')))\n"
    found = lint_text(HEAD + net + body)
    assert [p.code for p in found] == ["DL201"] and "`Net()`" in found[0].message("en")
    assert codes(net + body.replace("(Net())", "(nn.Linear(2, 2))")) == ["DL201"]
    # left alone: the wrapper moved after, a single device id, the wrapper handed on or returned
    assert codes(net + body + "model.to('cuda')\n") == []
    assert codes(net + body.replace("(Net())", "(Net(), device_ids=[0])")) == []
    assert codes(net + "def build():\n    return nn.DataParallel(Net())\n") == []
    assert codes(net + body + "trainer.fit(model)\n") == []
