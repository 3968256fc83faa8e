"""`audit` and `locate` drawn in a notebook (devicelab/_debug_html.py): a tree coloured by device with the odd
tensors marked, and the path to the module the locator names; the text of a terminal stays as it was."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

import pytest
import torch
from torch import nn

import devicelab
from devicelab import _debug_html, messages


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.pos = torch.zeros(3)  # a plain attribute: .to() leaves it on the CPU

    def forward(self, x):
        return self.proj(x) + self.pos


class Model(nn.Module):
    def __init__(self, blocks=2):
        super().__init__()
        self.embed = nn.Embedding(10, 3)
        self.blocks = nn.ModuleList(Block() for _ in range(blocks))
        self.head = nn.Linear(3, 2)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


@pytest.fixture(autouse=True)
def english():
    messages.set_language("en")
    yield
    messages.set_language("en")


def model_on_meta(blocks=2):
    model = Model(blocks).to("meta")  # the blocks' `pos` stay on the CPU
    return model, torch.zeros(2, 4, dtype=torch.long, device="meta")


def well_formed(markup: str) -> ElementTree.Element:
    return ElementTree.fromstring(markup.replace("&#8202;", " "))


def test_the_audit_draws_a_tree_of_modules_with_the_odd_tensors_marked():
    model, ids = model_on_meta()
    report = devicelab.audit(model, batch=ids)
    drawn = report._repr_html_()
    root = well_formed(drawn)
    assert drawn == _debug_html.audit_html(report)
    assert report.verdict in drawn
    summaries = ["".join(s.itertext()).split()[0] for s in root.iter("summary")]
    assert summaries[:3] == ["embed", "blocks", "0"], "modules in the model's order, nested"
    marked = [li for li in root.iter("li") if "".join(li.itertext()).startswith("✗")]
    assert len(marked) == len(report.odd) == 2
    assert all("pos" in "".join(li.itertext()) and "cpu" in "".join(li.itertext()) for li in marked)
    assert drawn.count("✗") == len(report.odd)


def test_each_device_has_its_own_colour_and_the_legend_counts_them():
    cpu, meta, gpu0, gpu1 = (_debug_html.badge(d) for d in ("cpu", "meta", "cuda:0", "cuda:1"))
    colour = re.compile(r"background:(#[0-9a-f]{6})")
    assert len({colour.search(b).group(1) for b in (cpu, meta, gpu0, gpu1)}) == 4
    model, ids = model_on_meta()
    drawn = devicelab.audit(model, batch=ids)._repr_html_()
    assert f"{meta}&#8202;×" in drawn and f"{cpu}&#8202;×2" in drawn


def test_in_a_big_model_only_the_modules_holding_an_odd_tensor_are_unfolded():
    model, ids = model_on_meta(blocks=13)  # 13 × 3 + 4 tensors: more than a small model has
    # every block's `pos` moved but block 3's: one odd tensor
    for index, block in enumerate(model.blocks):
        if index != 3:
            block.pos = block.pos.to("meta")
    root = well_formed(devicelab.audit(model, batch=ids)._repr_html_())
    opened = {"".join(d.find("summary").itertext()).split()[0]: d.get("open") is not None for d in root.iter("details")}
    assert opened["blocks"] and opened["3"], "the path to the odd tensor is open"
    assert not opened["embed"] and not opened["head"] and not opened["4"], "modules all in place are folded"


def test_names_are_escaped_and_a_report_of_nothing_says_so():
    report = devicelab.audit(nn.Module())
    assert messages.text("debug.audit.empty") in report._repr_html_()
    assert "&lt;b&gt;" in _debug_html._esc("<b>")


def test_the_audit_speaks_the_notebooks_language():
    model, ids = model_on_meta()
    messages.set_language("zh")
    drawn = devicelab.audit(model, batch=ids)._repr_html_()
    assert "普通属性" in drawn and "应在" in drawn and "attribute" not in drawn


def test_the_locator_draws_the_path_to_the_module_it_names_marked_with_both_devices():
    model, ids = model_on_meta()
    report = devicelab.locate(model, ids)
    assert report.module == "blocks.0"
    drawn = report._repr_html_()
    root = well_formed(drawn)
    crumbs = [s for s in root.iter("span") if "border:2px" in (s.get("style") or "") or "padding:0 .1em" in
              (s.get("style") or "")]
    assert ["".join(s.itertext()) for s in crumbs] == ["Model", "blocks", "0"]
    assert "border:2px" in crumbs[-1].get("style"), "the module the locator names is the one marked"
    assert _debug_html.badge("cpu") in drawn and _debug_html.badge("meta") in drawn
    assert _debug_html._esc(str(report)) in drawn, "the report's own text, PyTorch's message included"


def test_the_locator_draws_a_tensor_made_in_forward_with_the_module_that_made_it():
    class Made(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 3)

        def forward(self, x):
            return self.proj(x) + torch.ones(3)

    model = nn.Sequential(nn.Identity(), Made()).to("meta")
    report = devicelab.locate(model, torch.zeros(2, 3, device="meta"))
    drawn = report._repr_html_()
    assert "torch.ones" in drawn and _debug_html.badge("cpu") in drawn
    assert re.search(r"border:2px[^>]*>1</span>", drawn), "the module that made it, marked"


def test_a_report_with_nothing_wrong_marks_nothing():
    model = nn.Linear(3, 3)
    report = devicelab.locate(model, torch.zeros(2, 3))
    assert report.ok and "border:2px" not in report._repr_html_()
    assert "✗" not in devicelab.audit(model)._repr_html_()
