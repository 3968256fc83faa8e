"""DL106: in a function that is handed its tensors, a tensor made and sent to a device written in the code
(`.cuda()`, `device="cuda"`, `.to("cuda")`) meets those tensors (chapter 05).

Where the caller's tensors live is the caller's choice: the CPU (a machine without a GPU, a model kept on the CPU
of a GPU machine), or one GPU of several (one process per GPU). A tensor sent to "cuda" by name goes to the
current GPU whatever the inputs are; under `if x.is_cuda:` a bare `.cuda()` still goes to the current GPU, not to
x's. Flagged, at the factory, where the two meet (as in DL505: arithmetic, a comparison, a torch function or a
method given both, indexing).

Not flagged: `.cuda(x.device)` / `.to(x.device)` / `device=x.device`; a bare `.cuda()` or "cuda" in a file that
shows no other place to run (no `torch.cuda.is_available()`, no CPU device, no `--cpu`/`use_cuda` option, no
`local_rank`, DDP or `is_cuda`): code written for one GPU and nothing else is not wrong where it is run (DL103
speaks of the machine without CUDA); what DL505's "Not flagged" leaves out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ..inputs import input_name
from .base import Check
from .dl505_factory_meets_inputs import input_flow

# a program that runs elsewhere than on one GPU: a CPU fallback, a device option, several processes
OTHER_PLACES = re.compile(r"^(is_available|--cpu|use_cuda|no_cuda|--no[-_]cuda|--use[-_]cuda|local_rank|"
                          r"LOCAL_RANK|DistributedDataParallel|is_cuda|device_ids)$")
OTHER_PLACES_TEXT = re.compile(r"\b(cuda\.is_available|use_cuda|no_cuda|--cpu|local_rank|LOCAL_RANK|"
                               r"DistributedDataParallel|is_cuda)\b")
_FOLDERS: dict[str, bool] = {}


class FixedDeviceMeetsInputs(Check):
    """Sent to "cuda" by name, in a function that takes its tensors from anywhere."""

    code = "DL106"

    def file(self) -> None:
        flow = input_flow(self.a)
        taken = {(f.line, f.col) for f in self.a.findings if f.code in ("DL501", "DL504", "DL502")}
        elsewhere: bool | None = None
        for _fn, meeting in flow.meetings.values():
            tag, factory = meeting.tag, meeting.tag.origin
            if tag.kind != "fixed" or factory is None or meeting.how == "returned" or (
                    factory.lineno, factory.col_offset + 1) in taken:
                continue
            if tag.guard != "is_cuda":
                if elsewhere is None:
                    elsewhere = self._runs_elsewhere()
                if not elsewhere:
                    continue
            short = (self.a.resolve(factory.func) or "").rsplit(".", 1)[-1]
            root = input_name(meeting.other, self.a)
            label = f"torch.{short}" if short else ast.unparse(factory.func)
            self.a.add(self.code, factory, None, call=label, other=root, how=meeting.how,
                       variant="current_gpu" if tag.guard == "is_cuda" else "named")

    def _runs_elsewhere(self) -> bool:
        """The file, or a .py file beside it or in the folder above (the script that runs a library's loss),
        shows another place to run than the one GPU."""
        for node in self.a.nodes_of(ast.Constant, ast.Attribute, ast.Name, ast.arg):
            word = node.value if isinstance(node, ast.Constant) else getattr(node, "attr", None) or getattr(
                node, "id", None) or getattr(node, "arg", None)
            if isinstance(word, str) and OTHER_PLACES.match(word):
                return True
        path = self.a.path
        if path is None:
            return False
        return any(_folder_runs_elsewhere(folder) for folder in (path.parent, path.parent.parent))


def _folder_runs_elsewhere(folder: Path) -> bool:
    key = str(folder.resolve()) if folder.exists() else ""
    if not key:
        return False
    if key not in _FOLDERS:
        found = False
        for file in sorted(folder.glob("*.py"))[:200]:
            try:
                if OTHER_PLACES_TEXT.search(file.read_text(encoding="utf-8", errors="replace")):
                    found = True
                    break
            except OSError:
                continue
        _FOLDERS[key] = found
    return _FOLDERS[key]
