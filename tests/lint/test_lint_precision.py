"""What DL701 and DL501 leave alone because the code itself shows there is no device mistake, beside the true
positives they still find."""

from __future__ import annotations

import pytest

from devicelab.lint import lint_text

HEAD = "import io\nimport torch\nimport torch.nn as nn\nfrom torch.utils import model_zoo\n"


def codes(body: str) -> list[str]:
    return [p.code for p in lint_text(HEAD + body)]


@pytest.mark.parametrize("body", [
    "torch.save(model.state_dict(), 'ckpt.pt')\nstate = torch.load('ckpt.pt')\n",
    "path = 'runs/best.pt'\ntorch.save(model.state_dict(), path)\nstate = torch.load(path)\n",
    "torch.save(model, f=args.out)\nmodel = torch.load(args.out, weights_only=False)\n",
    "def save(m, path):\n    torch.save(m.state_dict(), path)\n\n\ndef load(path):\n    return torch.load(path)\n",
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
    assert "DL701" not in codes(body)


@pytest.mark.parametrize("body", [
    "state = torch.load('ckpt.pt')\n",  # from somewhere else
    "state = torch.load(args.checkpoint)\n",
    "state = torch.load('ckpt.pt')\ntorch.save(state, 'ckpt.pt')\n",  # saved after it was loaded
    "torch.save(model.state_dict(), 'a.pt')\nstate = torch.load('b.pt')\n",  # another path
    "buffer = open('ckpt.pt', 'rb')\nstate = torch.load(buffer)\n",  # a file, not a buffer
])
def test_dl701_still_flags_a_checkpoint_from_elsewhere(body: str) -> None:
    assert codes(body) == ["DL701"]


MODEL = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
{body}
        return self.fc(x)
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
