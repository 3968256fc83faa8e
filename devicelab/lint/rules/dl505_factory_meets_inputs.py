"""DL505 (and DL506, a preview rule): a tensor made without `device=` in a function that is handed its tensors
meets those tensors (chapter 05).

DL505: a method of a model (an `nn.Module`) or of an optimizer. The model's own parameters and buffers
(`self.log_std`), an optimizer's `param_groups`, and what its methods are given (forward's inputs, a loss's
predictions) are where the model is; a tensor the method makes itself is on the CPU. Only in a library module (an
`__init__.py` beside it) or in a file that puts something on a device somewhere: a script that moves nothing runs
its model on the CPU.

DL506 (preview: only with `--select DL506`): any other function of a library module. Its callers are not in
sight; the tensors they hand it may be anywhere. Such functions are called with CPU tensors as often as not
(normalising images for display, CPU-side statistics), so on the projects the rule was measured on it flagged
more that was not a mistake than that was (tests/lint/realworld/README.md).

Flagged, at the factory, when the two meet before any move: arithmetic or a comparison, a torch function given
both (`torch.cat`, `torch.scatter_reduce`, `torch.clamp`), a method of one given the other (`.index_select`,
`.remainder`, `.lerp_`, `.mul_`), a function of another tensor package given both (`scatter_add(ones, index)`), or
the new tensor indexed by an input (`mask[edge_index[0]]`); also when the new tensor is filled from the inputs and
returned (given CUDA tensors, the function hands back a CPU one). Inputs: parameters the function uses as tensors
(`x.shape`, `x.view(...)`, an annotation `Tensor`) and what is computed from them (inputs.py).

Not flagged: a factory with `device=`, `*_like`, `x.new_*`, a 0-dim `torch.tensor(number)`, a 0-dim tensor of a
Python value in arithmetic, a comparison, `torch.maximum`/`minimum` (PyTorch takes a 0-dim CPU tensor there as a
number), an empty placeholder (`torch.empty(0)`); one moved before it meets anything (`.to(x.device)`,
`.type_as(x)`); one that only feeds Python (`.item()`, sizes, `if`); one indexing an input (`x[torch.arange(n)]`
works); the CPU-side data work of DL504 (Datasets, transforms, `collate`, `load`, plotting, tests); a plain
function that calls `.numpy()` straight on what its inputs give (it is handed CPU tensors); what DL501, DL502 and
DL504 already report."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..inputs import InputFlow, input_name
from ..vocabulary import FACTORIES
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis

SHARED = "inputs"  # the key DL505/DL506 and DL106 share one InputFlow under


def input_flow(analysis: Analysis) -> InputFlow:
    """One reading of the file's functions for DL505, DL506 and DL106."""
    found = analysis.shared.get(SHARED)
    if not isinstance(found, InputFlow):
        found = analysis.shared[SHARED] = InputFlow(analysis)
    return found


class FactoryMeetsInputs(Check):
    """Born on the CPU, in a function that takes its tensors from anywhere."""

    code = "DL505"

    def file(self) -> None:
        taken = {(f.line, f.col) for f in self.a.findings if f.code in ("DL501", "DL504", "DL502")}
        library = self._library()
        moves: bool | None = None
        for _fn, meeting in input_flow(self.a).meetings.values():
            factory = meeting.tag.origin
            if meeting.tag.kind != "born" or factory is None or (factory.lineno, factory.col_offset + 1) in taken:
                continue
            if not meeting.model:
                if not library:
                    continue  # a script's function: its callers are in sight (DL504)
                code = "DL506"  # a library's function: a preview rule
            else:
                code = self.code
                if not library:
                    if moves is None:
                        moves = self._moves_anything()
                    if not moves:
                        continue  # a script that puts nothing on a device: its model runs on the CPU
            short = (self.a.resolve(factory.func) or "").rsplit(".", 1)[-1]
            root = input_name(meeting.other, self.a)
            label = f"torch.{short}" if short else ast.unparse(factory.func)
            fixable = root.isidentifier() and short in FACTORIES and short != "from_numpy"
            fix = {"kind": "device", "input": root} if fixable else None
            variant = "returned" if meeting.how == "returned" else "meets"
            self.a.add(code, factory, fix, call=label, other=root, how=meeting.how, variant=variant)

    def _library(self) -> bool:
        """A module of an importable package (an `__init__.py` beside it): its functions are called by code
        that is not in sight, with tensors wherever that code keeps them. A script's or a notebook's functions
        are called by the script, which shows where its tensors are (DL504 reads that)."""
        path = self.a.path
        return path is not None and path.suffix == ".py" and (path.parent / "__init__.py").is_file()

    def _moves_anything(self) -> bool:
        """The file puts something on a device somewhere: `.cuda()`, `.to(...)`, `device=`, "cuda"."""
        for node in self.a.nodes_of(ast.Call, ast.Constant):
            if isinstance(node, ast.Constant):
                if isinstance(node.value, str) and node.value.startswith("cuda"):
                    return True
            elif isinstance(node.func, ast.Attribute) and node.func.attr in ("cuda", "to") or any(
                    kw.arg == "device" for kw in node.keywords):
                return True
        return False
