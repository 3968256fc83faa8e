"""DL103: a runnable script or notebook that can only run with CUDA, and never asks whether CUDA is there
(chapter 01): `.cuda()` or `torch.load(..., map_location="cuda")` fails on a laptop, a CPU runtime or a Mac.

Flagged once per file, at its first such call (and at each `torch.load(map_location="cuda")`, a separate fix),
only when the file is meant to be run (a notebook, an `if __name__ == "__main__":` block, a loop or a call at
module level, or the CUDA-only call itself at module level), and nothing in it checks for a device: no
`torch.cuda.is_available()` / `device_count()`, no `torch.accelerator` or `torch.backends.mps`, no command-line
option or setting about the device (`--cuda`, `--device`, `--gpu`, `args.cuda`, `cfg.device`, `use_cuda`,
`no_cuda`), no function parameter named for a device (`device`, `gpu`, `local_rank`: the caller picks it), no
CUDA_VISIBLE_DEVICES, no distributed process group (a multi-GPU program expects GPUs), no GPU picked by number
(`torch.cuda.set_device(1)`) (machines.py); and its folder is not written for CUDA throughout (another script or
notebook of the folder calls `.cuda()` too, and none of them asks for a device: research code for GPU machines).

Only in a project meant for machines without a GPU too: the other files of the script's folder that run on the
CPU (and never call a bare `.cuda()` unconditionally) are at least as many as those written for the GPU, and there
is one (machines.py, `neighbours_run_on_cpu`). A lone script says nothing of CPU machines, and is not flagged.

Not flagged: modules of a library (only definitions at top level); a script beside a CUDA extension (`.cu` or `.cuh`
files in its folder or a folder right under it, or a `setup.py` there that builds a `CUDAExtension`: its test or
driver, and the extension exists only where CUDA is); `.to("cuda")` and `torch.device("cuda")`
(often the one place a script names its device, and noisy in snippets); `torch.cuda.*` calls (synchronize,
memory statistics, seeds: many are no-ops without a GPU); `"cuda"` in a conditional expression."""

from __future__ import annotations

import ast

from ..machines import asks_for_device, beside_cuda_sources, folder_written_for_cuda, neighbours_run_on_cpu
from ..tree import is_cuda_literal, keyword
from .base import Check


class CudaWithoutCheck(Check):
    """A script that only runs where there is CUDA."""

    code = "DL103"

    def file(self) -> None:
        a = self.a
        calls = [c for c in a.nodes_of(ast.Call) if isinstance(c.func, ast.Attribute) and c.func.attr in (
            "cuda", "load") or isinstance(c.func, ast.Name) and c.func.id == "load"]
        found = [(call, kind) for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset))
                 if (kind := self.cuda_only(call))]
        if not found or not (self.runnable() or any(a.enclosing_function(call) is None for call, _ in found)) or (
                self.checks_device()) or self.folder_written_for_cuda() or beside_cuda_sources(a.path) or (
                not neighbours_run_on_cpu(a.path)):  # nothing says the project runs on machines without a GPU
            return
        first = next((call for call, kind in found if kind != "map_location"), None)
        for call, kind in found:
            if kind == "map_location" or call is first:
                self.a.add(self.code, call, call=ast.unparse(call.func) + "(...)" if kind != "method" else (
                    f".{call.func.attr}(...)"))

    def cuda_only(self, call: ast.Call) -> str:
        """"method" for x.cuda(), "map_location" for torch.load(..., map_location="cuda"); "" for anything
        else."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "cuda" and not keyword(call, "device") and all(
                isinstance(arg, ast.Constant) for arg in call.args) and self.a.resolve(func) is None:
            return "method"
        name = self.a.resolve(func)
        if name == "torch.load":
            where = keyword(call, "map_location") or (call.args[1] if len(call.args) > 1 else None)
            if is_cuda_literal(where) or isinstance(where, ast.Call) and self.a.resolve(where.func) == (
                    "torch.device") and where.args and is_cuda_literal(where.args[0]):
                return "map_location"
        return ""

    def runnable(self) -> bool:
        """A notebook, a script with a `__main__` block, or code that runs at module level (a loop, a call)."""
        a = self.a
        if a.path is not None and a.path.suffix == ".ipynb":
            return True
        for stmt in a.tree.body:
            if isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test):
                return True
            if isinstance(stmt, (ast.For, ast.While, ast.With)):
                return True
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                return True
        return False

    def checks_device(self) -> bool:
        """Whether anything in the file asks which device there is, or picks a GPU by number
        (`torch.cuda.set_device(1)`: written for a CUDA machine); see machines.py."""
        a = self.a
        if any(node.attr == "set_device" and a.resolve(node) == "torch.cuda.set_device"
               for node in a.nodes_of(ast.Attribute)):
            return True
        return asks_for_device(a.nodes_of)

    def folder_written_for_cuda(self) -> bool:
        """Another script or notebook of the file's folder calls `.cuda()` too, and none asks for a device: the
        folder is written for CUDA machines throughout (a lone script is still flagged)."""
        return folder_written_for_cuda(self.a.path, files=2)
