"""`%load_ext devicelab`: in a notebook (Colab included), a device error raised by any cell is explained under its
traceback, in the learner's language, with a link to the chapter that explains it.

    %load_ext devicelab                     # or: import devicelab; devicelab.install(lang="zh")
    %unload_ext devicelab                   # or: devicelab.uninstall()

The traceback itself is shown exactly as before: the explanation is printed after the cell has failed (IPython's
`post_run_cell` event), and only for errors the reader recognises as device errors (or points to a chapter of
this course); other errors are left alone. Outside IPython, `install()` wraps `sys.excepthook` the same way.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from .errors import diagnose
from .explain import render_diagnosis
from .messages import get_language

_STATE: dict[str, Any] = {"lang": None, "shell": None, "excepthook": None}


def _explanation(error: BaseException) -> str | None:
    """The explanation of a raised error, or None when it is not one the course explains."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    d = diagnose(text)
    if not (d.device_error or d.chapter):
        return None
    return render_diagnosis(d, _STATE["lang"] or get_language())


def _after_cell(result: Any) -> None:
    error = getattr(result, "error_in_exec", None)
    if error is None:
        return
    try:
        shown = _explanation(error)
    except Exception:  # noqa: BLE001 - explaining must never add an error of its own
        return
    if shown:
        print("\n" + shown)


def _excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
    previous = _STATE["excepthook"] or sys.__excepthook__
    previous(kind, error, tb)
    try:
        shown = _explanation(error.with_traceback(tb))
    except Exception:  # noqa: BLE001
        return
    if shown:
        print("\n" + shown, file=sys.stderr)


def install(lang: str | None = None) -> None:
    """Explain every device error raised from now on (in `lang`, "en" or "zh"; default: the course's language)."""
    if lang not in (None, "en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
    _STATE["lang"] = lang
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        if _STATE["shell"] is not shell:
            shell.events.register("post_run_cell", _after_cell)
            _STATE["shell"] = shell
        return
    if _STATE["excepthook"] is None:
        _STATE["excepthook"] = sys.excepthook
        sys.excepthook = _excepthook


def uninstall() -> None:
    """Stop explaining errors (undoes `install()`)."""
    shell = _STATE["shell"]
    if shell is not None:
        try:
            shell.events.unregister("post_run_cell", _after_cell)
        except ValueError:
            pass
        _STATE["shell"] = None
    if _STATE["excepthook"] is not None:
        sys.excepthook = _STATE["excepthook"]
        _STATE["excepthook"] = None


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext devicelab`."""
    install(_STATE["lang"])


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext devicelab`."""
    uninstall()
