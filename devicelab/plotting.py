"""The proof's picture: the run's own loss (and accuracy) per step, drawn small enough for a web page."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .messages import get_language

_LABELS = {
    "en": {"loss": "loss", "accuracy": "accuracy", "epoch": "epoch", "step": "step", "title": "Proof: training",
           "resumed": "resumed from the checkpoint"},
    "zh": {"loss": "损失", "accuracy": "准确率", "epoch": "轮次", "step": "步", "title": "效果检验：训练过程",
           "resumed": "从检查点恢复训练"},
}
RESUMED_COLOR = "#7f7f7f"  # the dashed line where a run resumed from a checkpoint


_NO_MATPLOTLIB = {
    "en": "(No plot: matplotlib is not installed here. `pip install matplotlib` to see the curve.)",
    "zh": "（没有画图：这里没有安装 matplotlib。运行 `pip install matplotlib` 即可看到曲线。）",
}


def _numbers(name: str, values: Sequence[float] | None) -> list[float]:
    """The values as floats; refuse what a plot of a real run cannot hold."""
    if values is None:
        return []
    numbers = [float(v) for v in values]
    if any(not math.isfinite(v) for v in numbers):
        raise ValueError(f"{name} holds a value that is not finite: {numbers}")
    return numbers


def plot_training(
    loss: Sequence[float],
    accuracy: Sequence[float] | None = None,
    *,
    xlabel: str = "epoch",
    title: str | None = None,
    lang: str | None = None,
    resumed_after: int | None = None,
):
    """Draw the run's loss per step (with the accuracy on a second axis, on the right, if given); return the figure.

    `resumed_after`: the number of steps (or epochs) run before the run was resumed from a checkpoint; a dashed
    vertical line, named in the legend, marks that point.
    The figure is small (about 20 KB as PNG) so that a page showing it stays within its weight budget.
    Without matplotlib it says so in one line and returns None: the proof's numbers are printed anyway.
    """
    lang = lang or get_language()
    losses = _numbers("loss", loss)
    accuracies = _numbers("accuracy", accuracy)
    if not losses:
        raise ValueError("loss is empty: there is nothing to plot")
    if resumed_after is not None and not 0 < resumed_after < len(losses):
        raise ValueError(f"resumed_after={resumed_after} is not inside the run's {len(losses)} points")
    try:
        import matplotlib
    except ImportError:
        print(_NO_MATPLOTLIB.get(lang, _NO_MATPLOTLIB["en"]))
        return None

    if "inline" not in matplotlib.get_backend().lower() and not _in_notebook():
        matplotlib.use("Agg")  # a script or a test: draw without a display
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    font = _cjk_font() if lang == "zh" else None
    # Without a font that has Chinese glyphs (Colab has none), Chinese labels would be drawn as boxes.
    labels = _LABELS["zh"] if font else _LABELS["en"]
    if font and plt.rcParams["font.sans-serif"][:1] != [font]:
        plt.rcParams["font.sans-serif"] = [font, *plt.rcParams["font.sans-serif"]]
    steps = list(range(1, len(losses) + 1))

    figure, left = plt.subplots(figsize=(5.0, 2.6), dpi=80)
    left.plot(steps, losses, marker="o", markersize=3, color="#1f77b4", label=labels["loss"])
    left.set_xlabel(labels.get(xlabel, xlabel))
    left.set_ylabel(labels["loss"], color="#1f77b4")
    left.grid(alpha=0.3)
    left.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs and steps are whole numbers
    if accuracies:
        right = left.twinx()
        right.plot(range(1, len(accuracies) + 1), accuracies, marker="s", markersize=3, color="#d62728")
        right.set_ylabel(labels["accuracy"], color="#d62728")
        right.set_ylim(0, 1.05)
    if resumed_after is not None:
        # Between the last point before the checkpoint and the first one after it.
        left.axvline(resumed_after + 0.5, color=RESUMED_COLOR, linestyle="--", linewidth=1, label=labels["resumed"])
        left.legend(fontsize=8, loc="upper right")
    left.set_title(title or labels["title"], fontsize=10)
    figure.tight_layout()
    if _in_notebook():
        plt.show()
    return figure


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where the figure is shown as the cell's output)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"


_CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
              "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC")


def _cjk_font() -> str | None:
    """The name of an installed font that can draw Chinese, or None."""
    from matplotlib import font_manager

    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((name for name in _CJK_FONTS if name in installed), None)
