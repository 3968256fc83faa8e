"""DL102: a tensor that may live on an accelerator handed to NumPy or Matplotlib (chapter 01): `t.numpy()`,
`np.array(t)`, `np.asarray(t)`, `plt.plot(t)`, `plt.imshow(t)` ...

Flagged when the flow shows the tensor on a device: moved there (`x.to(device)`, `.cuda()`), the output of a
moved model (also one output of it: `for feature in model(x)`); or, in a method of a model class, a tensor of the
model's own parameters (`parameters_to_vector(self.parameters())`, an `nn.Parameter` or buffer of `self`), in a
file that asks for a device: such a tensor lives where the model does, on the GPU once the model is moved. Not
flagged: `.cpu()` first, `.numpy(force=True)`, a tensor of unknown origin (a parameter), a list of numbers, a tensor
moved to where another tensor of unknown place is (`x.to(y.device)`), a model's own tensors in a file that never
asks for a device."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..machines import asks_for_device
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

    def placed(self, value: Value | None) -> bool:
        """On the device, or a model's own tensor in a file that asks for a device."""
        if on_device(value):
            return True
        if value is None or not value.own:
            return False
        if not hasattr(self, "_asks"):
            self._asks = asks_for_device(self.a.nodes_of)
        return self._asks

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name in HOST_READERS:
            for arg in call.args[:3]:
                if not isinstance(arg, ast.Starred) and self.placed(self.a.value(arg, walker.env)):
                    short = name.replace("numpy.", "np.").replace("matplotlib.pyplot.", "plt.")
                    self.a.add(self.code, arg, call=f"{short}(...)")
                    return
            return
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" and not call.args and not (
                walker.forced(call)) and self.placed(self.a.value(call.func.value, walker.env)):
            self.a.add(self.code, call, call=".numpy()")
