"""The rules of `devicelab lint`: each has a code, a one-line message in both languages and its chapter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One mistake the linter recognises, and the chapter that teaches its fix."""

    code: str
    chapter: str
    message: dict[str, str]
    fixable: bool = False


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule("DL101", "01-devices", {
            "en": "the tensor returned by .{method}() is thrown away: Tensor.{method}() moves nothing in place, "
                  "assign it ({name} = {name}.{method}(...))",
            "zh": ".{method}() 返回的张量被丢掉了：Tensor.{method}() 不会原地移动，请把结果赋回去"
                  "（{name} = {name}.{method}(...)）",
        }),
        Rule("DL102", "01-devices", {
            "en": ".numpy() on a tensor that may live on the GPU: call .cpu() first (.detach().cpu().numpy())",
            "zh": "对可能在 GPU 上的张量调用了 .numpy()：先调用 .cpu()（.detach().cpu().numpy()）",
        }),
        Rule("DL301", "03-embedding", {
            "en": "`{name}` is still on the CPU here, while the model (or the other tensor) is on the device: "
                  "move inputs and labels with the model ({name} = {name}.to(device))",
            "zh": "`{name}` 此处仍在 CPU 上，而模型（或另一个张量）在设备上：输入和标签都要随模型移动"
                  "（{name} = {name}.to(device)）",
        }),
        Rule("DL201", "02-dataparallel", {
            "en": "nn.DataParallel wraps `{name}`, which is never moved to the GPU: with two GPUs or more its weights "
                  "stay on the CPU; move it first ({name}.to(device)), then wrap",
            "zh": "nn.DataParallel 包装的 `{name}` 从未移到 GPU 上：有两块及以上 GPU 时它的权重留在 CPU 上；"
                  "先移动（{name}.to(device)），再包装",
        }),
        Rule("DL501", "05-inside", {
            "en": "{call}(...) in forward without device=: born on the CPU when the model is on the GPU; "
                  "pass device=x.device, or make it from the input (x.new_zeros(...), torch.zeros_like(x))",
            "zh": "forward 里的 {call}(...) 没有 device=：模型在 GPU 上时它仍创建在 CPU 上；"
                  "请传入 device=x.device，或者从输入构造（x.new_zeros(...)、torch.zeros_like(x)）",
        }, fixable=True),
        Rule("DL502", "05-inside", {
            "en": "self.{name} is a plain tensor attribute used in forward: model.to() does not move it; "
                  "use self.register_buffer(\"{name}\", ...) (or nn.Parameter if it is trained)",
            "zh": "self.{name} 是 forward 里用到的普通张量属性：model.to() 不会移动它；"
                  "请用 self.register_buffer(\"{name}\", ...)（要训练的话用 nn.Parameter）",
        }),
        Rule("DL503", "05-inside", {
            "en": "{call}(...) is built inside forward: its weights are born on the CPU at every call and never "
                  "trained; build it once in __init__",
            "zh": "{call}(...) 是在 forward 里构造的：每次调用它的权重都重新创建在 CPU 上，而且从不被训练；"
                  "请在 __init__ 里构造一次",
        }),
        Rule("DL701", "07-checkpoints", {
            "en": "torch.load without map_location: a checkpoint saved on a GPU fails to load on a machine "
                  "without one; pass map_location (\"cpu\" or your device)",
            "zh": "torch.load 没有 map_location：在 GPU 上保存的检查点，到了没有 GPU 的机器上就加载失败；"
                  "请传入 map_location（\"cpu\" 或你的设备）",
        }, fixable=True),
        Rule("DL702", "07-checkpoints", {
            "en": "{optimizer}.load_state_dict(...) before {model}.to(...): the optimizer state is put on the "
                  "parameters' device at load time and stays behind; move the model, build the optimizer, then load",
            "zh": "{optimizer}.load_state_dict(...) 在 {model}.to(...) 之前：优化器状态在加载时放到参数所在的设备上，"
                  "之后会被落下；先移动模型、再构造优化器，最后加载",
        }),
        Rule("DL801", "08-amp", {
            "en": "{call} is deprecated (FutureWarning since PyTorch 2.4): use {new}",
            "zh": "{call} 已弃用（PyTorch 2.4 起发出 FutureWarning）：请改用 {new}",
        }, fixable=True),
    )
}
