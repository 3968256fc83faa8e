"""What DL701 and DL501 leave alone because the code itself shows there is no device mistake, beside the true
positives they still find."""

from __future__ import annotations

import pytest

from devicelab.lint import lint_text

HEAD = "import io\nimport torch\nimport torch.nn as nn\nfrom torch.utils import model_zoo\n"
# DL701 speaks only where the program shows it runs where the checkpoint's GPU may be absent: a CPU fallback
ANY_MACHINE = "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
# ... or `map_location` given to another load (which asks for no device: code written for CUDA stays so)
MOVES_CHECKPOINTS = "weights = torch.load('weights.pt', map_location='cpu')\n"


def codes(body: str) -> list[str]:
    return [p.code for p in lint_text(HEAD + body)]


@pytest.mark.parametrize("body", [
    "torch.save(model.state_dict(), 'ckpt.pt')\nstate = torch.load('ckpt.pt')\n",
    "path = 'runs/best.pt'\ntorch.save(model.state_dict(), path)\nstate = torch.load(path)\n",
    "torch.save(model, f=args.out)\nmodel = torch.load(args.out, weights_only=False)\n",
    "torch.save(trained, 'whole.pt')\n\n\ndef load_whole():\n    return torch.load('whole.pt')\n",  # top level first
    "torch.save(state, 'c.pt')\nwith open('c.pt', 'rb') as handle:\n    state = torch.load(handle)\n",
    "state = torch.load(io.BytesIO(blob))\n",
    "buffer = io.BytesIO()\ntorch.save(x, buffer)\nbuffer.seek(0)\ny = torch.load(buffer)\n",
    "state = torch.hub.load_state_dict_from_url('https://download.pytorch.org/models/resnet18.pth')\n",
    "state = model_zoo.load_url('https://download.pytorch.org/models/vgg11.pth')\n",
    "URL = 'https://download.pytorch.org/models/resnet18.pth'\nfile = URL.split('/')[-1]\n"
    "torch.hub.download_url_to_file(URL, file)\nstate = torch.load(file)\n",
    "cached = torch.hub.get_dir() + '/checkpoints/resnet18.pth'\nstate = torch.load(cached)\n",
    "url = 'https://example.org/weights.pt'\nstate = torch.load(os.path.basename(url))\n",
])
def test_dl701_leaves_alone_a_checkpoint_whose_origin_the_file_shows(body: str) -> None:
    assert "DL701" not in codes(ANY_MACHINE + body)


@pytest.mark.parametrize("body", [
    "state = torch.load('ckpt.pt')\n",  # from somewhere else
    "state = torch.load(args.checkpoint)\n",
    "state = torch.load('ckpt.pt')\ntorch.save(state, 'ckpt.pt')\n",  # saved after it was loaded
    "torch.save(model.state_dict(), 'a.pt')\nstate = torch.load('b.pt')\n",  # another path
    "buffer = open('ckpt.pt', 'rb')\nstate = torch.load(buffer)\n",  # a file, not a buffer
    # a save() and a load() method: two runs (a resume, perhaps on another machine or GPU)
    "def save(m, path):\n    torch.save(m.state_dict(), path)\n\n\ndef load(path):\n    return torch.load(path)\n",
])
def test_dl701_still_flags_a_checkpoint_from_elsewhere(body: str) -> None:
    assert codes(ANY_MACHINE + body) == ["DL701"]


MODEL = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
{body}
        return self.fc(x)


model = Net().to(device)
"""


def forward(body: str) -> list[str]:
    return codes(MODEL.format(body="\n".join("        " + line for line in body.splitlines())))


@pytest.mark.parametrize("body", [
    "if torch.rand(1) < 0.5:\n    x = x.flip(0)",
    "if torch.rand(1).item() < 0.5:\n    x = x.flip(0)",
    "p = torch.rand(1)\nif p > 0.5:\n    x = -x",
    "coin = torch.rand(()) < 0.1\nif coin:\n    x = x * 0",
    "for _ in range(int(torch.randint(1, 4, (1,)))):\n    x = x + 1",
    "n = torch.randint(1, 4, (1,))\nfor _ in range(n.item()):\n    x = x + 1",
    "steps = torch.tensor([2, 3])\nx = x.view(-1, int(steps.prod()))",
    "size = len(torch.arange(10))\nx = x[:size]",
    "k = torch.arange(6).shape[0]\nx = x[:k]",
    "k = torch.zeros(2, 3).size(1)\nx = x[:, :k]",
    "for i in torch.arange(3):\n    x = x * 2",
    "assert torch.ones(1).bool().all()",
    "noise = torch.randn(3)\nprint(noise.shape)",
])
def test_dl501_leaves_alone_a_factory_that_only_feeds_python(body: str) -> None:
    assert forward(body) == []


@pytest.mark.parametrize("body", [
    "x = x + torch.randn(x.shape[0], 4)",
    "mask = torch.rand(4) > 0.5\nx = x * mask",  # a comparison's result meets the input
    "n = torch.rand(4)\nif n.sum() > 1:\n    x = x + n",  # read by Python, and by the device
    "scale = torch.ones(4)\nx = x * scale",
])
def test_dl501_still_flags_a_factory_whose_result_meets_the_input(body: str) -> None:
    assert forward(body) == ["DL501"]


# --- code written for CUDA (machines.py): DL103 and DL701 ------------------------------------------------------

CUDA_SCRIPT = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nprint(model(torch.randn(1, 2).cuda()))\n"
ASKING_SCRIPT = "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\nprint(device)\n"


def file_codes(path) -> list[str]:
    from devicelab.lint import lint_file

    return [p.code for p in lint_file(path)]


def test_dl103_leaves_alone_a_folder_written_for_cuda_throughout(tmp_path) -> None:
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    (tmp_path / "evaluate.py").write_text(CUDA_SCRIPT)
    assert file_codes(tmp_path / "train.py") == []


def test_dl103_still_flags_a_lone_script_and_one_whose_neighbours_ask_for_a_device(tmp_path) -> None:
    lone, mixed = tmp_path / "lone", tmp_path / "mixed"
    lone.mkdir()
    mixed.mkdir()
    (lone / "train.py").write_text(CUDA_SCRIPT)
    (lone / "demo.py").write_text(ASKING_SCRIPT)  # the project's scripts run on machines without a GPU
    assert file_codes(lone / "train.py") == ["DL103"]
    (mixed / "train.py").write_text(CUDA_SCRIPT)
    (mixed / "evaluate.py").write_text(CUDA_SCRIPT)
    (mixed / "demo.py").write_text(ASKING_SCRIPT)  # the folder's code runs without CUDA elsewhere
    assert file_codes(mixed / "train.py") == ["DL103"]


def test_dl103_leaves_alone_a_script_that_picks_a_gpu_by_number() -> None:
    assert codes("torch.cuda.set_device(1)\nmodel = nn.Linear(2, 2).cuda()\nprint(model)\n") == []


@pytest.mark.parametrize("body", [
    # the function that loads moves to CUDA on every path
    "def sample(path):\n    model = nn.Linear(2, 2)\n    model.load_state_dict(torch.load(path))\n    model.cuda()\n",
    # the whole file calls .cuda() and never asks for a device
    "def load(path):\n    return torch.load(path)\n\n\nmodel = nn.Linear(2, 2).cuda()\n",
    # CPU tensors saved to a file of that name
    "torch.save(feats.cpu(), os.path.join(args.dump, 'feats.pth'))\n"
    "feats = torch.load(os.path.join(args.load, 'feats.pth'))\n",
    # the path saved before, handed to the function that loads it
    "torch.save(model.state_dict(), 'best_{}.pth'.format(args.name))\n\n\ndef extract(model, path):\n"
    "    model.load_state_dict(torch.load(path))\n\n\nbest = 'best_{}.pth'.format(args.name)\n"
    "extract(model, best)\n",
    # ... saved by a function called just before (the same run)
    "def finetune(model):\n    torch.save(model.state_dict(), 'best_{}.pth'.format(args.name))\n\n\n"
    "def extract(model, path):\n    model.load_state_dict(torch.load(path))\n\n\nfinetune(model)\n"
    "best = 'best_{}.pth'.format(args.name)\nextract(model, best)\n",
])
def test_dl701_leaves_alone_code_written_for_cuda_and_checkpoints_it_saved(body: str) -> None:
    assert "DL701" not in codes(MOVES_CHECKPOINTS + body)


@pytest.mark.parametrize("body", [
    # the file picks its device: the load's function may run on the CPU
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel = nn.Linear(2, 2)\nif device == 'cuda':\n"
    "    model.cuda()\n\n\ndef load(path):\n    return torch.load(path)\n",
    "torch.save(feats, os.path.join(args.dump, 'feats.pth'))\n"  # saved as it is: maybe CUDA tensors
    "feats = torch.load(os.path.join(args.load, 'feats.pth'))\n",
    "def extract(model, path):\n    model.load_state_dict(torch.load(path))\n\n\n"  # a path from elsewhere
    "extract(model, args.checkpoint)\n",
    "def finetune(model):\n    torch.save(model.state_dict(), 'best_{}.pth'.format(args.name))\n\n\n"
    "def extract(model, path):\n    model.load_state_dict(torch.load(path))\n\n\n"  # saved only after
    "best = 'best_{}.pth'.format(args.name)\nextract(model, best)\nfinetune(model)\n",
])
def test_dl701_still_flags_a_load_that_may_run_without_cuda(body: str) -> None:
    assert codes(ANY_MACHINE + body) == ["DL701"]


def test_dl701_leaves_alone_a_load_in_a_folder_written_for_cuda(tmp_path) -> None:
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef restore(path):\n    return torch.load(path)\n\n\n"
                                       "def restore_to(path, where):\n"
                                       "    return torch.load(path, map_location=where)\n")
    assert file_codes(tmp_path / "utils.py") == []
    (tmp_path / "demo.py").write_text(ASKING_SCRIPT)
    assert file_codes(tmp_path / "utils.py") == ["DL701"]


# --- DL301: the output of a model whose device is not known -----------------------------------------------------

@pytest.mark.parametrize("body", [
    # a submodule moves with the module that owns it
    "class Adversarial(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.classifier = nn.Linear(4, 1)\n\n    def forward(self, x):\n"
    "        pred = self.classifier(x)\n        device = pred.device\n"
    "        label = torch.ones(len(x), 1).float().to(device)\n"
    "        loss_fn = nn.BCELoss()\n        return loss_fn(pred, label)\n",
    # a model handed in (here wrapped by DDP around a model built elsewhere)
    "def step(model, images, loss_fn):\n    images = [im.cuda() for im in images]\n"
    "    out = model(images)\n    return loss_fn(out, torch.ones(2).cuda())\n\n\n"
    "ddp = nn.parallel.DistributedDataParallel(build(), device_ids=[0])\n"
    "step(ddp, batches, nn.MSELoss())\n",
])
def test_dl301_leaves_alone_the_output_of_a_submodule_or_a_model_handed_in(body: str) -> None:
    assert "DL301" not in codes(body)


def test_dl301_still_flags_the_output_of_a_model_left_on_the_cpu_beside_a_moved_label() -> None:
    body = ("model = nn.Linear(4, 2)\nout = model(torch.randn(3, 4))\nlabels = torch.ones(3).long().cuda()\n"
            "loss = nn.functional.cross_entropy(out, labels)\n")
    assert "DL301" in codes(body)


@pytest.mark.parametrize(("base", "flagged"), [("unittest.TestCase", False), ("object", True)])
def test_dl301_a_test_cases_move_does_not_carry_over_to_the_other_tests(tmp_path, base: str, flagged: bool) -> None:
    """In a unittest.TestCase each test starts from setUp: one test's `.cuda()` leaves the others' model on the CPU.
    The same methods in a plain class share one model, which the move does reach."""
    from devicelab.lint import lint_paths

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("from .net import *\n")
    (tmp_path / "models" / "net.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
        "        return self.fc(x)\n")
    test = tmp_path / "test_net.py"
    test.write_text(
        f"import unittest\n\nimport torch\nfrom models import Net\n\n\nclass TestNet({base}):\n"
        "    def setUp(self) -> None:\n        self.model = Net()\n\n    def test_forward(self):\n"
        "        x = torch.randn(16, 4)\n        y = self.model(x)\n        print(y.size())\n\n"
        "    def test_cuda(self):\n        self.model.cuda()\n")
    found = [p.code for p in lint_paths([test, tmp_path / "models"])]
    assert ("DL301" in found) is flagged, found


@pytest.mark.parametrize(("moved", "flagged"), [(".to(device)", False), ("", True)])
def test_dl301_a_loader_over_a_tensor_dataset_on_the_device_hands_out_batches_there(moved: str, flagged: bool) -> None:
    body = ("from torch.utils.data import DataLoader, TensorDataset\n"
            "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            f"x, y = torch.randn(64, 4){moved}, torch.randn(64, 1){moved}\n"
            "loader = DataLoader(TensorDataset(x, y), batch_size=8)\nmodel = nn.Linear(4, 1).to(device)\n"
            "for xb, yb in loader:\n    loss = nn.functional.mse_loss(model(xb), yb)\n")
    assert ("DL301" in codes(body)) is flagged


# --- DL503: a layer built once, moved and cached ------------------------------------------------------------------

LAZY = """
def singleton(key):
    def inner(fn):
        def wrapper(self, *args):
            found = getattr(self, key)
            if found is None:
                found = fn(self, *args)
                setattr(self, key, found)
            return found
        return wrapper
    return inner


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.projector = None
        self.fc = nn.Linear(4, 4)

    {decorator}
    def _projector(self, hidden):
        projector = nn.Linear(hidden.shape[1], 8)
        return projector.to(hidden)

    def forward(self, x):
        hidden = self.fc(x)
        return self._projector(hidden)(hidden)
"""


def test_dl503_leaves_alone_a_layer_built_moved_and_cached() -> None:
    assert codes(LAZY.format(decorator="@singleton('projector')")) == []
    assert codes("import functools\n" + LAZY.format(decorator="@functools.lru_cache")) == []


def test_dl503_still_flags_a_layer_built_and_moved_at_every_call() -> None:
    assert codes(LAZY.format(decorator="")) == ["DL503"]


# --- DL501: more that only feeds Python, moves through methods, CPU demos ------------------------------------

@pytest.mark.parametrize("body", [
    "drop = torch.zeros(3).uniform_(0., 1.) < 0.5\nif all(drop):\n    drop[0] = False\n"
    "keep = [i for i, d in zip(range(3), drop) if not d]\nx = x[:len(keep)]",
    "ids = torch.from_numpy(np.arange(4))\nsizes = [ids.eq(i).sum().item() for i in range(4)]\nx = x[:len(sizes)]",
    "arr = torch.ByteTensor(4).view(2, 2).numpy()\nx = x * float(arr.sum())",
    "label = torch.ones(4).long()\nx = x + label.float().to(x.device)",
])
def test_dl501_leaves_alone_python_only_results_and_moves_through_methods(body: str) -> None:
    assert forward(body) == []


def test_dl501_leaves_alone_a_comparison_with_a_plain_parameter() -> None:
    body = ("def dropout_layers(layers, p):\n    drop = torch.zeros(len(layers)).uniform_(0., 1.) < p\n"
            "    if all(drop):\n        drop[0] = False\n"
            "    return [layer for layer, d in zip(layers, drop) if not d]\n\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.ModuleList([nn.Linear(4, 4)])\n\n    def forward(self, x):\n"
            "        for layer in dropout_layers(self.layers, 0.1):\n            x = layer(x)\n        return x\n\n\n"
            "model = Net().to(device)\n")
    assert codes(body) == []
    assert codes(body.replace("< p", "< x_ref").replace("(layers, p)", "(layers, x_ref)").replace(
        "return [layer", "x_ref.view(-1)\n    return [layer")) == ["DL501"]


def test_dl501_leaves_alone_a_model_of_a_cpu_demo_in_a_main_block() -> None:
    demo = ("if __name__ == '__main__':\n    class Mock(nn.Module):\n        def forward(self, img):\n"
            "            return torch.ones(img.shape[0], 4).bool() & (img.view(img.shape[0], -1)[:, :4] > 0)\n\n"
            "    print(Mock()(torch.randn(2, 4)))\n")
    assert codes(demo) == []
    assert "DL501" in codes(demo.replace("Mock()(torch.randn(2, 4))", "Mock().cuda()(torch.randn(2, 4).cuda())"))


# --- DL602: each process's GPU picked by a helper of the project ------------------------------------------------

DDP_SCRIPT = """import torch
import torch.nn as nn
import utils


def main(args):
    utils.init_distributed_mode(args)
    model = nn.Linear(8, 2).cuda()
    return nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
"""


def test_dl602_leaves_alone_a_script_whose_project_helper_sets_the_device(tmp_path) -> None:
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef init_distributed_mode(args):\n"
                                       "    torch.distributed.init_process_group('nccl')\n"
                                       "    torch.cuda.set_device(args.gpu)\n")
    (tmp_path / "train.py").write_text(DDP_SCRIPT)
    assert "DL602" not in file_codes(tmp_path / "train.py")


def test_dl602_still_flags_a_script_whose_helper_never_sets_the_device(tmp_path) -> None:
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef init_distributed_mode(args):\n"
                                       "    torch.distributed.init_process_group('nccl')\n")
    (tmp_path / "train.py").write_text(DDP_SCRIPT)
    assert "DL602" in file_codes(tmp_path / "train.py")


# --- a class with `forward` on a base from another package is a model ----------------------------------------------

UNREAD_BASE = """
from fairseq.models import FairseqIncrementalDecoder


class Base:
    pass


class Decoder({base}):
    def forward(self, x):
        pad = torch.zeros(2, x.shape[1])
        return torch.cat([x, pad])


model = Decoder().to(device)
"""


def test_dl501_reads_a_class_with_forward_built_on_a_base_it_cannot_read() -> None:
    assert codes(UNREAD_BASE.format(base="FairseqIncrementalDecoder")) == ["DL501"]
    assert "DL501" not in codes(UNREAD_BASE.format(base="Base"))  # a plain class of the file: no model


# --- DL501: a bare .cuda() chosen by `is_cuda`; a static helper called through the class's name -----------------

PADDING = """
class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @staticmethod
    def pad(mask, size):
        filler = torch.zeros(mask.size(0), size)
        if mask.is_cuda:
            filler = filler{move}
        return torch.cat([mask.float(), filler.float()], dim=1)

    def forward(self, x, mask):
        mask = Attention.pad(mask, 2)
        return self.fc(x) * mask.sum()


model = Attention().to(device)
"""


def test_dl501_flags_a_factory_moved_by_a_bare_cuda_chosen_by_is_cuda_in_a_static_helper() -> None:
    assert codes(PADDING.format(move=".cuda()")) == ["DL501"]


def test_dl501_leaves_alone_the_same_factory_moved_to_the_mask_device() -> None:
    assert codes(PADDING.format(move=".to(mask.device)")) == []


# --- DL604: an NCCL process group in a program that never picks each process's GPU -------------------------------

@pytest.mark.parametrize("body", [
    "dist.init_process_group(backend='nccl')\nmodel = nn.Linear(2, 2).to(int(os.environ['LOCAL_RANK']))\n",
    "backend = 'nccl'\nif ddp:\n    dist.init_process_group(backend=backend)\n",  # a name only ever "nccl"
])
def test_dl604_flags_an_nccl_group_without_set_device(body: str) -> None:
    assert codes("import torch.distributed as dist\nimport os\n" + body) == ["DL604"]


@pytest.mark.parametrize("body", [
    "dist.init_process_group('nccl')\ntorch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n",
    "dist.init_process_group('nccl', device_id=torch.device('cuda', rank))\n",
    "dist.init_process_group('gloo')\n",
    "dist.init_process_group(backend=args.backend)\n",  # chosen at run time
    "backend = 'nccl' if torch.cuda.is_available() else 'gloo'\ndist.init_process_group(backend)\n",
    "os.environ['CUDA_VISIBLE_DEVICES'] = os.environ['LOCAL_RANK']\ndist.init_process_group('nccl')\n",
    "dist.init_process_group('nccl', rank=0, world_size=1)\n",  # one process: no other rank to share its GPU
])
def test_dl604_leaves_alone_a_group_whose_processes_pick_their_gpu_or_no_nccl(body: str) -> None:
    assert "DL604" not in codes("import torch.distributed as dist\nimport os\n" + body)


def test_dl604_leaves_alone_a_script_whose_project_helper_sets_the_device(tmp_path) -> None:
    (tmp_path / "utils.py").write_text("import torch\n\n\ndef setup(rank):\n    torch.cuda.set_device(rank)\n")
    (tmp_path / "train.py").write_text("import torch.distributed as dist\nimport utils\n\n"
                                       "dist.init_process_group('nccl')\nutils.setup(0)\n")
    assert "DL604" not in file_codes(tmp_path / "train.py")


# --- DL104: a .cuda() move that misses the device guard of its twin just above -----------------------------------

@pytest.mark.parametrize("body", [
    "if args.gpu is not None:\n    images = images.cuda(args.gpu)\ntarget = target.cuda(args.gpu)\n",
    "if torch.cuda.is_available():\n    x = x.cuda()\ny = y.cuda()\n",
])
def test_dl104_flags_a_move_without_the_guard_of_its_twin(body: str) -> None:
    assert codes(body) == ["DL104"]


@pytest.mark.parametrize("body", [
    "if args.gpu is not None:\n    images = images.cuda(args.gpu)\n    target = target.cuda(args.gpu)\n",
    "if not len(q):\n    q = q.cuda()\nlosses = losses.cuda()\n",  # a guard about something else
    "if args.gpu is not None:\n    images = images.cuda(args.gpu)\nelse:\n    images = images.cpu()\n"
    "target = target.cuda(args.gpu)\n",  # an if with an else
    "if args.gpu is not None:\n    images = images.cuda(args.gpu)\ntarget = target.cuda()\n",  # other arguments
])
def test_dl104_leaves_alone_other_guards_and_moves(body: str) -> None:
    assert "DL104" not in codes(body)


# --- DL105: the branches of a device choice move different tensors ------------------------------------------------

def test_dl105_flags_the_branches_that_leave_a_tensor_behind() -> None:
    body = ("if args.gpu is not None:\n    images = images.cuda(args.gpu)\nelif torch.cuda.is_available():\n"
            "    target = target.cuda()\nelse:\n    pass\n")
    assert [(p.line, p.code) for p in lint_text(HEAD + body)] == [(6, "DL105"), (8, "DL105")]


@pytest.mark.parametrize("body", [
    "if args.gpu is not None:\n    images = images.cuda(args.gpu)\n    target = target.cuda(args.gpu)\n"
    "elif torch.backends.mps.is_available():\n    images = images.to('mps')\n    target = target.to('mps')\n",
    "if torch.cuda.is_available():\n    images = images.cuda()\n    target = target.cuda()\nelse:\n"
    "    images = images.float()\n",  # the CPU branch moves nothing
    "if epoch > 3:\n    images = images.to(other)\nelse:\n    target = target.to(other)\n",  # not about the device
])
def test_dl105_leaves_alone_branches_that_move_the_same_tensors(body: str) -> None:
    assert "DL105" not in codes(body)


# --- DL701: code that demands CUDA; a load that holds no GPU tensors ----------------------------------------------

@pytest.mark.parametrize("body", [
    "assert torch.cuda.is_available(), 'an NVIDIA GPU is needed'\n\n\ndef load(path):\n    return torch.load(path)\n",
    "import sys\nif not torch.cuda.is_available():\n    sys.exit('no GPU')\n\n\ndef load(path):\n"
    "    return torch.load(path)\n",
    "def load(path):\n    assert torch.cuda.is_available()\n    return torch.load(path)\n",
])
def test_dl701_leaves_alone_code_that_demands_cuda(body: str) -> None:
    assert "DL701" not in codes(MOVES_CHECKPOINTS + body)


@pytest.mark.parametrize("body", [
    "def resume(path):\n    lr_scheduler.load_state_dict(torch.load(path))\n",
    "def resume(self, path):\n    self.scaler.load_state_dict(torch.load(path))\n",
    "import random\n\n\ndef resume(path):\n    state = torch.load(path)\n    random.setstate(state['python'])\n"
    "    torch.random.set_rng_state(state['cpu'])\n    torch.cuda.random.set_rng_state_all(state['cuda'])\n",
])
def test_dl701_leaves_alone_a_load_that_holds_no_gpu_tensors(body: str) -> None:
    assert "DL701" not in codes(ANY_MACHINE + body)


@pytest.mark.parametrize("body", [
    "if torch.cuda.is_available():\n    print('GPU')\n\n\ndef load(path):\n    return torch.load(path)\n",  # a check
    "def resume(path):\n    model.load_state_dict(torch.load(path))\n",  # a model's weights
    "import random\n\n\ndef resume(path):\n    state = torch.load(path)\n    random.setstate(state['python'])\n"
    "    model.load_state_dict(state['model'])\n",  # RNG states beside a model's weights
])
def test_dl701_still_flags_a_load_of_tensors_in_code_that_runs_without_cuda(body: str) -> None:
    assert codes(ANY_MACHINE + body) == ["DL701"]


# --- DL501: a value only logged; DL504: a function given CPU tensors; DL103: a CUDA extension's script -----------

def test_dl501_leaves_alone_a_factory_only_logged() -> None:
    logged = ("if x.sum() > 0:\n    p = self.fc(x).mean()\nelse:\n    p = torch.tensor([0.0])\n"
              "log = {'p': p.detach().mean()}")
    assert forward(logged) == []
    assert forward(logged.replace("p.detach().mean()", "p.mean()") + "\nx = x + log['p']") == ["DL501"]


POST = """
def post_process_result(h: int, w: int, boxes: torch.Tensor, logits: torch.Tensor):
    boxes = boxes * torch.Tensor([w, h, w, h])
    return boxes, {scores}
"""


@pytest.mark.parametrize(("scores", "flagged"), [("logits.numpy()", False), ("logits.cpu().numpy()", True)])
def test_dl504_a_function_that_calls_numpy_on_a_parameter_is_given_cpu_tensors(scores: str, flagged: bool) -> None:
    assert ("DL504" in codes(POST.format(scores=scores))) is flagged


@pytest.mark.parametrize("beside", ["setup", "sources"])
def test_dl103_leaves_alone_the_script_of_a_cuda_extension(tmp_path, beside: str) -> None:
    (tmp_path / "test.py").write_text(CUDA_SCRIPT)
    (tmp_path / "demo.py").write_text(ASKING_SCRIPT)  # the project's scripts run on machines without a GPU
    assert file_codes(tmp_path / "test.py") == ["DL103"]
    if beside == "setup":
        (tmp_path / "setup.py").write_text("from torch.utils.cpp_extension import CUDAExtension\n")
    else:
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "kernel.cu").write_text("__global__ void k() {}\n")
    assert file_codes(tmp_path / "test.py") == []


# --- DL701: only where the program shows it runs where the checkpoint's GPU may be absent -----------------------

GPU_ONLY = "model = nn.Linear(2, 2)\nmodel.load_state_dict(torch.load('best.pt'))\nmodel.to('cuda')\n"


@pytest.mark.parametrize(("head", "flagged"), [
    ("", False),  # nothing says where it runs: a GPU machine like the one that trained it, for all the file shows
    ("device = 'cuda' if torch.cuda.is_available() else 'cpu'\n", True),  # a CPU fallback
    ("device = torch.device('cuda') if args.use_gpu else torch.device('cpu')\n", True),  # a setting: GPU off
    ("parser.add_argument('--device', default='cpu')\n", True),  # an option
    ("other = torch.load('other.pt', map_location='cpu')\n", True),  # map_location given elsewhere
    ("torch.backends.cudnn.benchmark = True\n", False),  # about CUDA, not about another machine
    ("print(model.to('cpu'))\n", False),  # a result moved off the GPU: not a machine without one
])
def test_dl701_speaks_only_where_the_program_runs_without_the_gpu(head: str, flagged: bool) -> None:
    assert ("DL701" in codes(head + GPU_ONLY)) is flagged


LIBRARY = "def restore(model, path):\n    model.load_state_dict(torch.load(path))\n    return model\n"


def test_dl701_flags_a_library_module_that_follows_its_callers_device(tmp_path) -> None:
    assert codes(LIBRARY) == []  # a helper that says nothing about devices: unknown
    follows = LIBRARY + "\n\ndef to_model(model, x):\n    return x.to(next(model.parameters()).device)\n"
    assert codes(follows) == ["DL701"]
    assert codes(follows + "\n\nif __name__ == '__main__':\n    restore(nn.Linear(2, 2), 'w.pt')\n") == []  # a script
    package = tmp_path / "project" / "lib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "restore.py").write_text(HEAD + LIBRARY)
    assert file_codes(package / "restore.py") == []
    (tmp_path / "project" / "config.py").write_text(HEAD + "use_gpu = True\n")  # the scripts' setting
    assert file_codes(package / "restore.py") == ["DL701"]


# --- DL103 only where the project runs on machines without a GPU; DL501 only on a model that is moved ------------

def test_dl103_leaves_alone_a_script_whose_neighbours_say_nothing_of_a_cpu(tmp_path) -> None:
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    assert file_codes(tmp_path / "train.py") == []  # alone: nothing says the project runs without a GPU
    (tmp_path / "demo.py").write_text(ASKING_SCRIPT)
    assert file_codes(tmp_path / "train.py") == ["DL103"]
    (tmp_path / "evaluate.py").write_text(CUDA_SCRIPT.replace("print(", "model.eval()\nprint("))
    (tmp_path / "export.py").write_text(CUDA_SCRIPT.replace("print(", "model.train()\nprint("))
    assert file_codes(tmp_path / "train.py") == []  # most of its neighbours are written for the GPU


def test_dl103_a_neighbour_that_asks_but_always_calls_cuda_is_written_for_the_gpu(tmp_path) -> None:
    (tmp_path / "train.py").write_text(CUDA_SCRIPT)
    (tmp_path / "knn.py").write_text("import torch\n\n\ndef run(model, feats):\n    model.cuda()\n"
                                     "    if args.use_cuda:\n        feats = feats.cuda()\n    return model(feats)\n")
    assert file_codes(tmp_path / "train.py") == []
    (tmp_path / "knn.py").write_text("import torch\n\n\ndef run(model, feats):\n"
                                     "    if args.use_cuda:\n        feats = feats.cuda()\n    return model(feats)\n")
    assert file_codes(tmp_path / "train.py") == ["DL103"]


NEVER_MOVED = MODEL.replace("model = Net().to(device)", "model = Net()")


def test_dl501_leaves_alone_a_model_never_moved_and_flags_it_once_moved() -> None:
    body = "        x = x + torch.randn(x.shape[0], 4)"
    assert codes(NEVER_MOVED.format(body=body)) == []
    assert codes(NEVER_MOVED.format(body=body) + "model.cuda()\n") == ["DL501"]


def test_dl501_follows_a_model_moved_by_a_script_beside_it_or_built_inside_a_moved_one(tmp_path) -> None:
    (tmp_path / "layers.py").write_text(HEAD + MODEL.replace("model = Net().to(device)\n", "").format(
        body="        x = x + torch.randn(x.shape[0], 4)"))
    assert file_codes(tmp_path / "layers.py") == []
    (tmp_path / "train.py").write_text("import torch\nfrom layers import Net\nmodel = Net().to(device)\n")
    assert file_codes(tmp_path / "layers.py") == ["DL501"]
    (tmp_path / "train.py").write_text("import torch\n\n\nclass Big(nn.Module):\n    def __init__(self):\n"
                                       "        self.net = Net()\n\n\nmodel = Big()\nmodel.to(device)\n")
    assert file_codes(tmp_path / "layers.py") == ["DL501"]
    (tmp_path / "train.py").write_text("import torch\nmodel = Big()\nmodel.to(device)\n")
    assert file_codes(tmp_path / "layers.py") == []


@pytest.mark.parametrize("body", [
    "noise = torch.randn(4)\nreturn noise",  # handed back: where it goes is not shown
    "n = torch.arange(4) * 2\ntotal = n.sum()\nself.count = total",  # kept, never meets the model's tensors
    "idx = torch.arange(x.shape[0])\nx = x[idx]",
    "s = torch.ones(4) * x.shape[0] / x.size(1)\nself.scale = s",  # a shape is a number, not the input
])
def test_dl501_leaves_alone_a_factory_that_never_meets_the_model(body: str) -> None:
    assert forward(body) == []


@pytest.mark.parametrize("body", [
    "h = torch.zeros(2, 4)\nx = self.fc(h) + x",  # given to a submodule
    "m = torch.ones(4).bool()\nx = x.masked_fill(m, 0)",  # a method of the input given it
    "t = torch.arange(4).float()\nx = torch.stack([x, t.expand_as(x)])",
    "w = torch.rand(4)\nself.last = w[x.long()]",  # a CPU tensor indexed by one on the device
])
def test_dl501_flags_a_factory_that_meets_the_model(body: str) -> None:
    assert forward(body) == ["DL501"]


# --- DL505 / DL106: tensors made in a function that is handed its tensors ------------------------------------------

def library_codes(tmp_path, body: str) -> list[str]:
    """The codes found in `body` as a module of a package (an `__init__.py` beside it: library code)."""
    from devicelab.lint import Config, lint_file

    package = tmp_path / "lib"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    module = package / "ops.py"
    module.write_text(HEAD + body)
    return [p.code for p in lint_file(module, Config(select=("DL", "DL106", "DL506")))]  # preview rules on


@pytest.mark.parametrize("body", [
    "def pad(x, n):\n    return torch.cat([x, torch.zeros(n, x.shape[1])])\n",
    "def mask(index, n):\n    m = torch.zeros(n, dtype=torch.bool)\n    return m[index.view(-1)]\n",
    "def gather(x, n):\n    return x.index_select(0, torch.arange(n))\n",
    "def fill(x, n):\n    out = torch.zeros(n, x.size(1))\n    out[: x.size(0)] = x\n    return out\n",
    "def scale(x, weight=None):\n    if weight is None:\n        weight = torch.ones(x.shape[-1])\n"
    "    return x * weight\n",  # the default path makes it on the CPU
])
def test_dl506_flags_a_library_function_whose_own_tensor_meets_its_inputs(tmp_path, body: str) -> None:
    assert library_codes(tmp_path, body) == ["DL506"]


def test_preview_rules_run_only_when_selected_by_their_full_code(tmp_path) -> None:
    from devicelab.lint import Config, lint_file

    library_codes(tmp_path, "def pad(x, n):\n    return torch.cat([x, torch.zeros(n, x.shape[1])])\n")
    module = tmp_path / "lib" / "ops.py"
    assert [p.code for p in lint_file(module, Config())] == []
    assert [p.code for p in lint_file(module, Config(select=("DL5",)))] == []
    assert [p.code for p in lint_file(module, Config(select=("DL506",)))] == ["DL506"]


@pytest.mark.parametrize("body", [
    "def pad(x, n):\n    return torch.cat([x, x.new_zeros(n, x.shape[1])])\n",
    "def pad(x, n):\n    return torch.cat([x, torch.zeros(n, x.shape[1], device=x.device)])\n",
    "def pick(x, n):\n    return x[torch.arange(n)]\n",  # a CPU index into a tensor anywhere works
    "def total(x):\n    return torch.tensor(0.0) + x.sum()\n",  # 0-dim
    "def ramp(x):\n    t = torch.linspace(0, 1, x.shape[-1])\n    t = t.to(x.device)\n    return x * t\n",
    "def pad(mask, n):\n    f = torch.zeros(mask.size(0), n)\n    if mask.is_cuda:\n        f = f.to(mask.device)\n"
    "    return torch.cat([mask, f], 1)\n",
    "def keep(scores):\n    k = scores > torch.zeros(scores.shape[0])\n    return scores.numpy()[k.numpy()]\n",
    "def sizes(batch):\n    s = torch.tensor([len(b) for b in batch])\n    return s.tolist()\n",
    "def one_hot(y, n):\n    y = y.type(torch.LongTensor).view(-1, 1)\n"
    "    return torch.zeros(y.size(0), n).scatter_(1, y, 1)\n",  # .type(torch.LongTensor): on the CPU now
    "def emb(t, dim):\n    e = math.log(10000) / (dim - 1)\n    e = torch.exp(torch.arange(dim) * -e)\n"
    "    e = e.to(t.device)\n    return t.float()[:, None] * e[None, :]\n",  # math.log: a number
    "def step(x, y, rtol=0.05):\n    rtol = torch.tensor(rtol)\n    return torch.maximum(x.abs(), y.abs()) * rtol\n",
])
def test_dl506_leaves_alone_a_tensor_made_where_the_inputs_are_or_meeting_none(tmp_path, body: str) -> None:
    assert library_codes(tmp_path, "import math\n" + body) == []


def test_dl505_still_flags_a_0_dim_cpu_tensor_outside_arithmetic_comparisons_maximum_and_minimum(tmp_path) -> None:
    body = ("class Attention(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.scale = nn.Parameter(torch.ones(4, 1, 1))\n\n"
            "    def forward(self, x):\n        s = torch.clamp(self.scale, max=torch.tensor(1.0 / 0.01).log())\n"
            "        return x * s.exp()\n")
    assert library_codes(tmp_path, body) == ["DL505"]  # the shape of a finding labelled true from its issue thread


def test_dl505_reads_a_script_function_to_dl504_and_a_model_method_anywhere_something_moves() -> None:
    function = "def pad(x, n):\n    return torch.cat([x, torch.zeros(n, x.shape[1])])\n"
    assert codes(function) == []  # a script's own function: its callers are in sight
    model = ("class Policy(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.log_std = nn.Parameter(torch.zeros(2))\n\n"
             "    def std(self, n):\n        return torch.ones(n, 1) * self.log_std.exp()\n")
    assert codes(model) == []  # a script that puts nothing on a device: its model runs on the CPU
    assert codes(model + "\npolicy = Policy().to('cuda')\n") == ["DL505"]


@pytest.mark.parametrize("body, flagged", [
    ("def pad(mask, n):\n    f = torch.zeros(mask.size(0), n)\n    if mask.is_cuda:\n        f = f.cuda()\n"
     "    return torch.cat([mask, f], 1)\n", True),  # the current GPU, not mask's
    ("def pad(mask, n):\n    f = torch.zeros(mask.size(0), n).cuda()\n    return torch.cat([mask, f], 1)\n", True),
    ("def pad(mask, n):\n    f = torch.zeros(mask.size(0), n).cuda(mask.device)\n"
     "    return torch.cat([mask, f], 1)\n", False),
])
def test_dl106_flags_a_tensor_sent_to_cuda_by_name_where_the_program_runs_elsewhere_too(
        tmp_path, body: str, flagged: bool) -> None:
    found = library_codes(tmp_path, "DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n" + body)
    assert found == (["DL106"] if flagged else [])


def test_dl106_leaves_alone_code_written_for_one_gpu_only(tmp_path) -> None:
    body = "def pad(mask, n):\n    f = torch.zeros(mask.size(0), n).cuda()\n    return torch.cat([mask, f], 1)\n"
    assert library_codes(tmp_path, body) == []  # nothing here or beside it runs anywhere but on the GPU


@pytest.mark.parametrize(("other", "flagged"), [
    ("return torch.hub.load_state_dict_from_url(URL + name, map_location='cpu')", False),
    ("return torch.load(name)", True),
])
def test_dl701_leaves_alone_a_local_copy_of_weights_the_other_branch_downloads(other: str, flagged: bool) -> None:
    body = ("URL = 'https://example.org/weights/'\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\n"
            "def pretrained(name, folder=None):\n    if folder is not None:\n"
            "        return torch.load(folder + '/' + name)\n    else:\n        " + other + "\n")
    assert ("DL701" in codes(body)) is flagged
