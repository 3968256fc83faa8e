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
    "proof.unit_epoch": {"en": "epoch", "zh": "轮"},
    "proof.unit_step": {"en": "step", "zh": "步"},
    "proof.caption": {
        "en": "The plot shows this run's loss per {unit} (blue, left axis): from {first:.3f} to {last:.3f}",
        "zh": "图中是这次训练每{unit}的损失（蓝线，左轴）：从 {first:.3f} 变为 {last:.3f}",
    },
    "proof.caption_accuracy": {
        "en": "; and its accuracy (red, right axis): from {first:.2f} to {last:.2f}",
        "zh": "；以及准确率（红线，右轴）：从 {first:.2f} 变为 {last:.2f}",
    },
    "proof.learns": {"en": ". The falling loss is the model learning.", "zh": "。损失在下降，说明模型在学习。"},
    "proof.flat": {
        "en": ". The loss did not fall: the model is not learning.",
        "zh": "。损失没有下降：模型没有在学习。",
    },
    # --- cells that show nothing useful without a GPU -----------------------------------------
    "gpu_note.line": {
        "en": "(No GPU here, device: {device}.) On a GPU {what}",
        "zh": "（这里没有 GPU，设备是 {device}。）在 GPU 上，{what}",
    },
    "gpu_note.expected": {
        "en": "Expected on a CUDA GPU (not run here):",
        "zh": "在 CUDA GPU 上预期的输出（这里没有运行）：",
    },
    "gpu_note.ch01.devices": {
        "en": "this line shows two devices: the model moved to the GPU, the input stayed on the CPU.",
        "zh": "这一行会显示两个不同的设备：模型移到了 GPU 上，输入还留在 CPU 上。",
    },
    "gpu_note.ch03.devices": {
        "en": "this line shows the model on the GPU and the batch from the DataLoader on the CPU.",
        "zh": "这一行会显示模型在 GPU 上，而 DataLoader 给出的批次在 CPU 上。",
    },
    "gpu_note.ch04.devices": {
        "en": "this line shows the label (top level) moved to the GPU and the features (one level down) left on "
        "the CPU.",
        "zh": "这一行会显示标签（在最外层）移到了 GPU 上，而特征（在下一层）留在了 CPU 上。",
    },
    "gpu_note.ch05.devices": {
        "en": "this line shows the GRU on the GPU and the plain attribute `mean` still on the CPU.",
        "zh": "这一行会显示 GRU 在 GPU 上，而普通属性 `mean` 仍在 CPU 上。",
    },
    "gpu_note.ch08.half_conv": {
        "en": "with CUDA this cell runs the `.half()` batch through the GPU's convolution, which words its dtype "
        "error with the legacy type names.",
        "zh": "有 CUDA 时，这个单元会让 `.half()` 批次经过 GPU 上的卷积，那里的 dtype 报错用的是旧式类型名。",
    },
    "measure.what.autocast_step": {
        "en": "On a CUDA GPU it times one training step of a 4096-wide network in float32 and under float16 "
        "autocast, and shows each one's step time (`*_step_ms`) and peak memory (`*_peak_mib`).",
        "zh": "在 CUDA GPU 上，它会为一个 4096 宽的网络分别在 float32 和 float16 autocast 下的一次训练步骤计时，"
        "并给出各自的步骤耗时（`*_step_ms`）和显存峰值（`*_peak_mib`）。",
    },
    "measure.what.pinned_vs_pageable": {
        "en": "On a CUDA GPU it copies 64 MB from pageable and from pinned memory, and shows when each call "
        "returns (`*_returns_ms`) and when each copy is done (`*_done_ms`).",
        "zh": "在 CUDA GPU 上，它会分别从可分页内存和锁页内存复制 64 MB，并给出每次调用返回的时刻"
        "（`*_returns_ms`）和每次复制完成的时刻（`*_done_ms`）。",
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
