"""The one bilingual message catalogue: every sentence the helper prints, in English and Chinese."""

from __future__ import annotations

LANGUAGES = ("en", "zh")
_state = {"lang": "en"}


def set_language(lang: str) -> None:
    """Choose the language of every message printed from now on ('en' or 'zh')."""
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {lang!r}")
    _state["lang"] = lang


def get_language() -> str:
    """The language chosen with set_language (English by default)."""
    return _state["lang"]


def add(entries: dict[str, dict[str, str]]) -> None:
    """Add a chapter's messages to the catalogue; a key may be defined only once."""
    for key, entry in entries.items():
        if key in CATALOGUE:
            raise KeyError(f"message {key!r} is defined twice")
        CATALOGUE[key] = entry


def text(key: str, lang: str | None = None, /, **params: object) -> str:
    """The message `key` in the chosen language, with `params` filled in."""
    entry = CATALOGUE[key]
    return entry[lang or _state["lang"]].format(**params)


CATALOGUE: dict[str, dict[str, str]] = {
    # --- verdicts -------------------------------------------------------------------
    "verdict.not_attempted": {
        "en": "Not attempted yet: {reason}",
        "zh": "还没有作答：{reason}",
    },
    "verdict.incorrect": {"en": "Not yet: {reason}", "zh": "还不对：{reason}"},
    "verdict.correct": {"en": "Correct! {reason}", "zh": "正确！{reason}"},
    "hint.header": {"en": "Hint {level}/{total}:", "zh": "提示 {level}/{total}："},
    "hint.no_more": {
        "en": "That was the last hint. `{name}.solution()` shows one answer.",
        "zh": "提示已经用完。`{name}.solution()` 会给出一种答案。",
    },
    "solution.header": {"en": "One solution:", "zh": "一种解法："},
    "check.crashed": {
        "en": "the check could not use your answer: {error}",
        "zh": "检查无法使用你的答案：{error}",
    },
    "check.meta_note": {
        "en": "(`meta` is the check's stand-in for your GPU: every machine has this other device, so the check "
        "runs your code towards it to catch what stays on the CPU. Where it says `meta`, a GPU would say `cuda:0`.)",
        "zh": "（`meta` 是检查用来代替你的 GPU 的设备：每台机器都有这个“另一个设备”，检查把你的代码往它上面跑，"
        "就能发现留在 CPU 上的东西。这里写 `meta` 的地方，在 GPU 上会写成 `cuda:0`。）",
    },
    "check.too_slow": {
        "en": "your code was still running after {seconds} s of checking (an endless loop?).",
        "zh": "检查运行了 {seconds} 秒，你的代码仍未结束（是不是死循环？）。",
    },
    "proof.locked": {
        "en": "The training run waits for your fixes: still open: {open}. "
        "Run the check cells above, fix what they report, then run this cell again.",
        "zh": "训练要等你的修复完成：还没通过的练习：{open}。"
        "先运行上面的检查单元，按提示修正后再运行本单元。",
    },
    # --- reproduce ------------------------------------------------------------------
    "reproduce.raised": {
        "en": "The expected error happened on {device} ({kind}):",
        "zh": "预期的错误在 {device} 上出现了（{kind}）：",
    },
    "reproduce.no_accelerator": {
        "en": "No GPU here (device: {device}), so this step cannot fail the way it does on a GPU; "
        "the code was not run.",
        "zh": "这里没有 GPU（设备：{device}），这一步无法像在 GPU 上那样出错；代码没有运行。",
    },
    "reproduce.captured": {
        "en": "Captured on a real GPU ({gpu}, torch {torch}, {date}):",
        "zh": "在真实 GPU 上捕获的输出（{gpu}，torch {torch}，{date}）：",
    },
    "reproduce.expected_only": {
        "en": "Expected wording, as current PyTorch prints it (not yet captured on a GPU for this lab):",
        "zh": "预期的报错文字，即当前 PyTorch 的措辞（本实验尚未在 GPU 上捕获）：",
    },
    "reproduce.did_not_raise": {
        "en": "Broken lab: step '{key}' was expected to raise {kind} on {device}, but it ran without error.",
        "zh": "实验有误：步骤“{key}”本应在 {device} 上引发 {kind}，却没有报错。",
    },
    "reproduce.wrong_error": {
        "en": "Broken lab: step '{key}' was expected to raise {kind}, but it raised something else.\n"
        "expected (any wording of): {expected}\ngot: {got}",
        "zh": "实验有误：步骤“{key}”本应引发 {kind}，却引发了别的错误。\n"
        "预期（任一措辞）：{expected}\n实际：{got}",
    },
    "reproduce.strict_no_accelerator": {
        "en": "Strict mode ({env}=1) needs a GPU or MPS, but the device is {device}.",
        "zh": "严格模式（{env}=1）需要 GPU 或 MPS，但当前设备是 {device}。",
    },
    # --- setup ----------------------------------------------------------------------
    "setup.ready": {"en": "Lab {lab} ready.", "zh": "实验 {lab} 已就绪。"},
    "setup.cpu_note": {
        "en": "No GPU: every cell still runs. A step that needs a GPU says so and shows the error as "
        "captured on a GPU or, until a GPU has verified this lab, the expected wording, labelled as such.",
        "zh": "没有 GPU：所有单元照样可以运行。需要 GPU 的步骤会说明这一点，并展示在 GPU 上捕获的报错；"
        "本实验尚未在 GPU 上验证时，则展示预期的报错文字，并注明这一点。",
    },
}
