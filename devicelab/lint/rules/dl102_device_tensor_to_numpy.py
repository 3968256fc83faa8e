"""DL102: a tensor that may live on an accelerator handed to NumPy or Matplotlib (chapter 01): `t.numpy()`,
`np.array(t)`, `np.asarray(t)`, `plt.plot(t)`, `plt.imshow(t)` ...

Flagged when the flow shows the tensor on a device: moved there (`x.to(device)`, `.cuda()`), the output of a
moved model, or one of a moved model's own tensors (`model.fc.weight`, a `p` of `model.parameters()`,
`model.state_dict()[k]`, `parameters_to_vector(model.parameters())`). Not flagged: `.cpu()` first,
`.numpy(force=True)`, a tensor of unknown origin (a parameter), a list of numbers, a tensor moved to where another
tensor of unknown place is (`x.to(y.device)`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker
    from ..values import Value

# what reads a tensor's memory on the CPU: NumPy's constructors and Matplotlib's plotting functions
HOST_READERS = frozenset(
    {f"numpy.{name}" for name in ("array", "asarray", "asanyarray", "ascontiguousarray", "save", "savetxt")}
    | {f"matplotlib.pyplot.{name}" for name in ("plot", "scatter", "imshow", "hist", "bar", "barh", "errorbar",
                                                 "semilogy", "semilogx", "loglog", "fill_between", "step", "stem",
                                                 "matshow", "pcolormesh", "contour", "contourf")}
)


def on_device(value: Value | None) -> bool:
    """A tensor (or a thing moved with .to()) that the flow puts on an accelerator."""
    return value is not None and value.kind in ("tensor", "moved") and value.device


class DeviceTensorToNumpy(Check):
    """NumPy and Matplotlib read CPU memory only."""

    code = "DL102"
    calls = HOST_READERS
    methods = frozenset({"numpy"})

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name in HOST_READERS:
            for arg in call.args[:3]:
                if not isinstance(arg, ast.Starred) and on_device(self.a.value(arg, walker.env)):
                    short = name.replace("numpy.", "np.").replace("matplotlib.pyplot.", "plt.")
                    self.a.add(self.code, arg, call=f"{short}(...)")
                    return
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" and not call.args and not (
                walker.forced(call)) and on_device(self.a.value(call.func.value, walker.env)):
            self.a.add(self.code, call, call=".numpy()")
