"""The grader's static scan: what a submission's code does to the objects the checks rely on.

It reads the code, it runs nothing: assignments, `setattr` or `del` on devicelab, torch, `builtins`, `sys`
(but `sys.path` and `torch.backends`), `lab` or `exN`; edits of `sys.modules`; trace, profile and audit
hooks; `gc` object walks; `ctypes`; `exec`, `eval`, `compile`, `__import__`; IPython event callbacks and
`run_cell`; a rebound `exec`, `globals`, `get_ipython` (namespace hijacks); `__closure__`, `cell_contents`,
frames and code objects; IPython startup folders, kernelspecs, site-packages and `.pth` files; `/proc`, command
lines and other notebooks (how one submission would find another); the grade-line
marker in a string; tests for the meta device (outside chapter 07). Obfuscated code can hide from it: the
run-time fingerprints and the sandbox are the other layers.
"""

from __future__ import annotations

import ast
import re

import nbformat

from .kernel import HIJACKABLE

MARKER = "DEVICELAB-GRADE"


WATCHED_ROOTS = ("devicelab", "torch", "builtins", "sys", "importlib", "signal", "json", "threading", "IPython")
ALLOWED_PREFIXES = ("torch.backends.", "sys.path", "torch.manual_seed")
FORBIDDEN_CALLS = {
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys._getframe", "threading.settrace",
    "threading.setprofile", "gc.get_objects", "gc.get_referrers", "gc.get_referents", "importlib.reload",
    "builtins.exec", "builtins.eval", "builtins.compile", "builtins.__import__", "builtins.setattr",
    "builtins.delattr",
}
LAB_NAMES = re.compile(r"^(lab|ex\d+)$")
# Attributes that reach into functions, frames and code objects: how a cell finds what the grader holds.
INTROSPECTION = {"__closure__", "cell_contents", "__globals__", "f_globals", "f_locals", "f_back", "tb_frame",
                 "gi_frame", "cr_frame", "ag_frame", "__code__", "__defaults__", "__kwdefaults__", "__subclasses__",
                 "_current_frames"}
# The IPython shell's ways to run or rewrite code, and where kernels and interpreters read code at start.
SHELL_RUNNERS = {"run_cell", "run_cell_async", "run_ast_nodes", "run_code", "safe_execfile", "input_transformers_post",
                 "input_transformers_cleanup", "ast_transformers", "transform_cell"}
STARTUP_NAMES = {"profile_dir", "startup_dir", "get_ipython_dir", "locate_profile", "get_ipython_cache_dir",
                 "jupyter_data_dir", "jupyter_config_dir", "jupyter_runtime_dir", "jupyter_path", "install_kernel_spec",
                 "KernelSpecManager", "getusersitepackages", "getsitepackages", "USER_SITE", "USER_BASE",
                 "ipython_dir"}
# Where a submission would look for other processes (the grader's command line names the submissions) or for
# other notebooks: what no lab asks for.
PEEKING_TEXT = re.compile(r"(^|[/\\])proc([/\\]|$)|\bcmdline\b|\.ipynb\b|\bpsutil\b")
STARTUP_TEXT = re.compile(r"(\.ipython|ipython_config|profile_default|[/\\]startup\b|kernel\.json|[/\\]kernels\b|"
                          r"\.jupyter|jupyter[/\\]|site-packages|dist-packages|sitecustomize|usercustomize|\.pth\b|"
                          r"IPYTHONDIR|JUPYTER_)", re.I)


def python_of(cell_source: str) -> str:
    """The cell as Python (IPython magics and shell escapes turned into calls)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - without IPython, magics stay unparsable and are skipped
        return cell_source


class _Scanner(ast.NodeVisitor):
    def __init__(self, watch_meta: bool = True) -> None:
        self.watch_meta = watch_meta
        self.aliases: dict[str, str] = {"__builtins__": "builtins"}
        for name in ("exec", "eval", "compile", "__import__", "setattr", "delattr"):
            self.aliases[name] = f"builtins.{name}"
        self.found: list[str] = []

    def dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            if LAB_NAMES.match(node.id):
                return f"devicelab.{node.id}"
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def watched(self, node: ast.AST) -> str | None:
        # The first name inside `node` that stands for a watched module (or the lab), as a dotted path.
        for inner in ast.walk(node):
            path = self.dotted(inner) if isinstance(inner, (ast.Name, ast.Attribute)) else None
            if path and path.split(".")[0] in WATCHED_ROOTS:
                full = self.dotted(node) or path
                if not full.startswith(ALLOWED_PREFIXES):
                    return full
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bind(alias.asname or alias.name.split(".")[0])
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                alias.name.split(".")[0]
            if alias.name.split(".")[0] == "ctypes":
                self.found.append("imports ctypes")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if not (node.module == "IPython" and alias.name == "get_ipython" and not alias.asname):
                self.bind(alias.asname or alias.name)
            if node.module:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        if (node.module or "").split(".")[0] == "ctypes":
            self.found.append("imports ctypes")

    def target(self, node: ast.AST, verb: str) -> None:
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self.target(element, verb)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Name) and node.value.func.id in ("globals", "vars", "locals"):
            self.found.append(f"{verb} {ast.unparse(node)} (a namespace hijack)")
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            path = self.watched(node.value)
            if path is not None or (isinstance(node, ast.Subscript) and self.dotted(node.value) == "sys.modules"):
                self.found.append(f"{verb} {ast.unparse(node)}")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.target(target, "assigns")
            self.bind_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.target(node.target, "assigns")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.target(node.target, "assigns")
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self.target(target, "deletes")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        if name in FORBIDDEN_CALLS:
            self.found.append(f"calls {name.removeprefix('builtins.')}()")
            if name in ("builtins.setattr", "builtins.delattr") and node.args and self.watched(node.args[0]) is None:
                self.found.pop()  # setattr on the student's own objects is fine
        elif name.startswith("sys.modules."):
            self.found.append(f"calls {name}()")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "register" and \
                "events" in ast.unparse(node.func.value):
            self.found.append("registers an IPython event callback")
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "__setitem__", "setdefault") and \
                isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) and \
                node.func.value.func.id in ("globals", "vars", "locals"):
            self.found.append(f"calls {ast.unparse(node.func)}() (a namespace hijack)")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and MARKER in node.value:
            self.found.append(f"a string containing the grade marker {MARKER!r}")
        if isinstance(node.value, str) and (match := STARTUP_TEXT.search(node.value)):
            self.found.append(f"names an IPython, Jupyter or interpreter start-up location ({match.group(0)!r})")
        if isinstance(node.value, str) and (match := PEEKING_TEXT.search(node.value)):
            self.found.append(f"looks at other processes or notebooks ({match.group(0)!r})")
        if isinstance(node.value, str) and node.value in INTROSPECTION | SHELL_RUNNERS:
            self.found.append(f"a string naming {node.value}")

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        if self.watch_meta and any(isinstance(o, ast.Constant) and o.value == "meta" for o in operands):
            self.found.append(f"tests for the meta device ({ast.unparse(node)[:80]}): the checks use it in place "
                              "of a GPU")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "is_meta" and self.watch_meta:
            self.found.append("tests for the meta device (.is_meta): the checks use it in place of a GPU")
        if node.attr in INTROSPECTION:
            self.found.append(f"reaches into functions or frames ({node.attr})")
        elif node.attr in SHELL_RUNNERS:
            self.found.append(f"uses the shell's {node.attr}")
        elif node.attr in STARTUP_NAMES:
            self.found.append(f"touches start-up folders or kernelspecs ({node.attr})")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in STARTUP_NAMES:
            self.found.append(f"touches start-up folders or kernelspecs ({node.id})")
        self.generic_visit(node)

    def bind(self, name: str | None) -> None:
        if name in HIJACKABLE:
            self.found.append(f"rebinds `{name}` (a namespace hijack)")

    def bind_target(self, node: ast.AST) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                self.bind(inner.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 - ast.NodeVisitor's naming

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self.bind_target(node.target)
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self.bind_target(item.optional_vars)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target.id)
        self.generic_visit(node)


def static_findings(nb: nbformat.NotebookNode, lab: str = "") -> list[str]:
    """What the submission's code does to the objects the checks rely on (empty for honest notebooks).

    Outside chapter 07 (where meta tensors are the subject), code that asks whether a tensor is on the meta
    device is reported too: the checks run the learner's code on `meta` in place of a second device, so such a
    test can only tell the checks apart from a real run."""
    scanner = _Scanner(watch_meta=lab != "07-checkpoints")
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(python_of(cell.source))
        except SyntaxError:
            continue
        scanner.visit(tree)
    return list(dict.fromkeys(scanner.found))
