"""Small questions asked of a parsed tree: keyword arguments, literals, `self.attr`, what an import binds."""

from __future__ import annotations

import ast
from collections.abc import Iterator

# Load, Store, Add, Not, Eq...: one instance shared by every node of a parsed tree, so not nodes of their own
SHARED_NODES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def scope_walk(nodes: list[ast.AST] | ast.AST) -> Iterator[ast.AST]:
    """Every node under `nodes`, not descending into nested functions, lambdas and classes."""
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword argument `name`, if given."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def has_double_star(call: ast.Call) -> bool:
    """Whether the call passes **kwargs (anything may be in it)."""
    return any(kw.arg is None for kw in call.keywords)


def is_number(node: ast.expr) -> bool:
    """A literal number (or a negated one)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool))


def is_literal_data(node: ast.expr) -> bool:
    """Literal data for torch.tensor: numbers, or lists and tuples of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(is_literal_data(e) for e in node.elts)
    return is_number(node)


def is_cuda_literal(node: ast.expr | None) -> bool:
    """"cuda" or "cuda:N" written as a string."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def self_attribute(node: ast.AST, self_name: str) -> str | None:
    """`attr` when node is `self.attr`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
        return node.attr
    return None


def held_name(node: ast.expr) -> str | None:
    """The name a value is held under in a scope: `model`, or `self.model` (an attribute of the instance, followed
    within one method; never looked up as a plain name)."""
    if isinstance(node, ast.Name):
        return node.id
    attr = self_attribute(node, "self")
    return None if attr is None else f"self.{attr}"


def header(stmt: ast.stmt) -> list[ast.AST]:
    """A statement's own expressions: for a compound statement, its test, target or items, not its blocks."""
    if not isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try,
                             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt]
    out: list[ast.AST] = []
    for name, child in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers"):
            continue
        if isinstance(child, list):
            out.extend(c for c in child if isinstance(c, ast.AST))
        elif isinstance(child, ast.AST):
            out.append(child)
    return out


def assigned_names(stmt: ast.stmt) -> list[str]:
    """The plain names an assignment binds."""
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


class Imports:
    """The dotted names that the file's imports bind: `nn` -> torch.nn, `zeros` -> torch.zeros."""

    def __init__(self, tree: ast.AST, nodes: list[ast.AST] | None = None) -> None:
        self.names: dict[str, str] = {}
        self.local: list[ast.ImportFrom | ast.Import] = []  # imports that may name the project's own modules
        for node in nodes if nodes is not None else ast.walk(tree):
            if isinstance(node, ast.Import):
                self.local.append(node)
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.names[root] = root
            elif isinstance(node, ast.ImportFrom):
                self.local.append(node)
                if node.module and not node.level:
                    for alias in node.names:
                        if alias.name != "*":
                            self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression such as `nn.Linear` or `F.relu` stands for, when it comes from an import."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.names:
            return None
        return ".".join([self.names[node.id], *reversed(parts)])


def canonical(name: str | None) -> str | None:
    """torch.nn.modules.linear.Linear -> torch.nn.Linear; torch.functional.F -> itself."""
    if name and name.startswith("torch.nn.modules."):
        return "torch.nn." + name.rsplit(".", 1)[1]
    return name
