"""Claims tests for chapter 7 (saving and loading across devices): each test proves one statement the chapter makes.

Most of this chapter's errors happen on every machine, so most tests run on the CPU for real. A checkpoint
"saved on a GPU" is written with the location tag a GPU save writes (``gpu_checkpoint``); a GPU-marked test
checks that a real save on a GPU writes the same tags. ``meta`` stands in for a GPU where a device is needed.
"""

import importlib
import inspect
import io
import pickle
import warnings
import zipfile

import pytest
import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

from devicelab.chapters.checkpoints import (
    LOAD_WEIGHTS_SOLUTION,
    RESUME_SOLUTION,
    UNWRAP_SOLUTION,
    Net,
    gpu_checkpoint,
)
from devicelab.errors import lookup

META = torch.device("meta")


def storage_locations(path: str) -> list[str]:
    """The location tags a checkpoint records for its storages (read from its data.pkl, without loading)."""
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith("data.pkl"))
        data = archive.read(name)
    locations = []

    class Anything(dict):
        def __init__(self, *args, **kwargs):
            super().__init__()

        def __setstate__(self, state):
            pass

    class Reader(pickle.Unpickler):
        def persistent_load(self, pid):
            locations.append(pid[3])  # ('storage', storage_type, key, location, numel)

        def find_class(self, module, name):
            return Anything

    Reader(io.BytesIO(data)).load()
    return locations


def solution(code: str, **extra) -> dict:
    namespace = {"torch": torch, "nn": nn, "Net": Net, **extra}
    exec(code, namespace)
    return namespace


def trained_checkpoint() -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.ones(2, 4)).sum().backward()
        optimizer.step()
    return model, optimizer


# --------------------------------------------------------------------------------------------- CPU


def test_torch_save_records_each_storages_device_and_the_lab_writes_cuda_0(tmp_path):
    """torch.save records each storage's device ("cpu" here); the lab's gpu_checkpoint writes "cuda:0" instead.

    zh: torch.save 为每个存储记下它所在的设备（这里是 "cpu"）；实验的 gpu_checkpoint 写入的则是 "cuda:0"。
    """
    state = Net().state_dict()
    torch.save(state, tmp_path / "cpu.pt")
    gpu_checkpoint(state, str(tmp_path / "gpu.pt"))
    assert set(storage_locations(str(tmp_path / "cpu.pt"))) == {"cpu"}
    assert set(storage_locations(str(tmp_path / "gpu.pt"))) == {"cuda:0"}


def test_loading_a_cuda_checkpoint_without_a_cuda_gpu_raises_the_is_available_wording(tmp_path):
    """Without a CUDA GPU, loading a cuda:0 checkpoint says "...but torch.cuda.is_available() is False".

    zh: 没有 CUDA GPU 时，加载 cuda:0 检查点会报 "... on a CUDA device but torch.cuda.is_available() is False"。
    """
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    path = gpu_checkpoint(Net().state_dict(), str(tmp_path / "gpu.pt"))
    for weights_only in (True, False):
        with pytest.raises(RuntimeError) as info:
            torch.load(path, weights_only=weights_only)
        assert str(info.value).startswith(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU."
        )
        assert [m.chapter for m in lookup(str(info.value))] == ["07-checkpoints"]


def test_the_device_count_wording_is_in_the_installed_torch_and_the_index():
    """A checkpoint naming a GPU past the last one says "... on CUDA device N but torch.cuda.device_count() is M".

    zh: 检查点里记的 GPU 编号超出最后一块 GPU 时，报 "... on CUDA device N but torch.cuda.device_count() is M"。
    """
    source = open(torch.serialization.__file__, encoding="utf-8").read()
    assert '"Attempting to deserialize object on {backend_name.upper()} device "' in source.replace("f\"", "\"")
    assert "but torch.{backend_name}.device_count() is {device_count}. " in source
    message = ("Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
               "torch.load with map_location to map your storages to an existing device.")
    assert [m.chapter for m in lookup(message)] == ["07-checkpoints"]


@pytest.mark.parametrize("where", [
    "cpu", torch.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage,
], ids=["string", "device", "dict", "function"])
def test_every_form_of_map_location_loads_a_cuda_checkpoint_on_the_cpu(tmp_path, where):
    """map_location "cpu", torch.device("cpu"), {"cuda:0": "cpu"} or a function loads a cuda:0 checkpoint on the CPU.

    zh: map_location 取 "cpu"、torch.device("cpu")、{"cuda:0": "cpu"} 或一个函数时，cuda:0 检查点都能加载到 CPU 上。
    """
    state = Net().state_dict()
    path = gpu_checkpoint(state, str(tmp_path / "gpu.pt"))
    loaded = torch.load(path, map_location=where)
    assert all(t.device.type == "cpu" and torch.equal(t, state[k]) for k, t in loaded.items())


def test_map_location_device_puts_every_tensor_there(tmp_path):
    """map_location=device puts every tensor on that device (meta here).

    zh: map_location=device 把每个张量都放到那个设备上（这里是 meta）。
    """
    path = gpu_checkpoint(Net().state_dict(), str(tmp_path / "gpu.pt"))
    assert {t.device for t in torch.load(path, map_location=META).values()} == {META}
    load_weights = solution(LOAD_WEIGHTS_SOLUTION)["load_weights"]
    assert {t.device for t in load_weights(path, META).values()} == {META}


def test_a_dict_map_location_leaves_locations_it_does_not_name_where_they_were(tmp_path):
    """A dict map_location renames only the locations it names; others load where they were saved.

    zh: 字典形式的 map_location 只改写它列出的位置；其他位置照保存时的位置加载。
    """
    path = gpu_checkpoint(Net().state_dict(), str(tmp_path / "gpu.pt"), "cuda:1")
    assert {t.device.type for t in torch.load(path, map_location={"cuda:1": "cpu"}).values()} == {"cpu"}
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            torch.load(path, map_location={"cuda:0": "cpu"})


def test_a_dataparallel_state_dict_has_module_prefixed_keys_and_a_plain_model_refuses_it():
    """A DataParallel state_dict's keys start with "module."; a plain model's load_state_dict lists them as unexpected.

    zh: DataParallel 的 state_dict 的键都以 "module." 开头；普通模型的 load_state_dict 会把它们列为多余的键。
    """
    wrapped = nn.DataParallel(Net())
    assert all(key.startswith("module.") for key in wrapped.state_dict())
    assert list(wrapped.module.state_dict()) == list(Net().state_dict())
    with pytest.raises(RuntimeError) as info:
        Net().load_state_dict(wrapped.state_dict())
    message = str(info.value)
    assert 'Missing key(s) in state_dict: "body.weight"' in message
    assert 'Unexpected key(s) in state_dict: "module.body.weight"' in message
    assert [m.chapter for m in lookup(message)] == ["07-checkpoints"]


def test_consume_prefix_works_in_place_and_returns_none():
    """consume_prefix_in_state_dict_if_present strips the prefix in place and returns None.

    zh: consume_prefix_in_state_dict_if_present 原地去掉前缀，并返回 None。
    """
    state = nn.DataParallel(Net()).state_dict()
    assert consume_prefix_in_state_dict_if_present(state, "module.") is None
    assert list(state) == list(Net().state_dict())
    Net().load_state_dict(state)


def test_strict_false_loads_nothing_says_nothing_and_returns_the_skipped_keys(capsys):
    """load_state_dict(strict=False) of a prefixed state_dict loads nothing, says nothing, returns the keys.

    zh: 对带前缀的 state_dict 调用 load_state_dict(strict=False)：什么都不加载，不报错也不打印，跳过的键只在返回值里。
    """
    torch.manual_seed(0)
    source = nn.DataParallel(Net())
    target = Net()
    before = {k: v.clone() for k, v in target.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = target.load_state_dict(source.state_dict(), strict=False)
    assert capsys.readouterr() == ("", "")
    assert len(result.missing_keys) == 4 and len(result.unexpected_keys) == 4
    assert all(torch.equal(before[k], v) for k, v in target.state_dict().items())


def test_removeprefix_keeps_submodule_keys_that_replace_would_break():
    """The course's unwrap keeps "submodule.weight"; key.replace("module.", "") turns it into "subweight".

    zh: 课程的 unwrap 保留 "submodule.weight"；key.replace("module.", "") 却把它变成 "subweight"。
    """
    unwrap = solution(UNWRAP_SOLUTION)["unwrap"]
    state = {"module.submodule.weight": torch.ones(1), "head.bias": torch.zeros(1)}
    assert list(unwrap(state)) == ["submodule.weight", "head.bias"]
    assert "module.submodule.weight".replace("module.", "") == "subweight"


def test_weights_only_true_refuses_a_whole_pickled_model(tmp_path):
    """torch.load(weights_only=True) of a whole pickled model raises UnpicklingError "Weights only load failed".

    zh: 用 weights_only=True 加载整个被 pickle 的模型时，抛出 UnpicklingError "Weights only load failed"。
    """
    torch.save(Net(), tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
        torch.load(tmp_path / "whole.pt", weights_only=True)
    assert "Unsupported global: GLOBAL devicelab.chapters.checkpoints.Net" in str(info.value)
    assert [m.chapter for m in lookup(str(info.value))] == ["07-checkpoints"]
    assert isinstance(torch.load(tmp_path / "whole.pt", weights_only=False), Net)
    with torch.serialization.safe_globals([Net, nn.Linear]):
        assert isinstance(torch.load(tmp_path / "whole.pt", weights_only=True), Net)


def test_weights_only_is_the_default_in_this_torch(tmp_path):
    """weights_only=True is torch.load's default since PyTorch 2.6 (checked on the installed version).

    zh: 从 PyTorch 2.6 起 weights_only=True 是 torch.load 的默认值（在已安装的版本上检查）。
    """
    if torch.torch_version.TorchVersion(torch.__version__) < (2, 6):
        pytest.skip("older than 2.6")
    torch.save(Net(), tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError):
        torch.load(tmp_path / "whole.pt")


def test_a_pickle_can_run_a_function_when_loaded_without_weights_only(tmp_path):
    """A pickle can call any function when loaded with weights_only=False; weights_only=True refuses it.

    zh: 用 weights_only=False 加载时，pickle 可以调用任何函数；weights_only=True 会拒绝它。
    """
    from devicelab.chapters import checkpoints

    torch.save({"x": checkpoints._Payload()}, tmp_path / "trap.pt")
    checkpoints._RAN.clear()
    with pytest.raises(pickle.UnpicklingError):
        torch.load(tmp_path / "trap.pt", weights_only=True)
    assert checkpoints._RAN == []
    torch.load(tmp_path / "trap.pt", weights_only=False)
    assert checkpoints._RAN == ["the checkpoint ran code"]
    checkpoints._RAN.clear()


def test_optimizer_load_state_dict_puts_state_where_each_parameter_is_when_loading():
    """Optimizer.load_state_dict puts Adam's running averages on each parameter's device at load time; a CPU step stays.

    zh: Optimizer.load_state_dict 在加载时把 Adam 的滑动平均移到各个参数所在的设备上；保存在 CPU 上的 step 留在 CPU 上。
    """
    _, optimizer = trained_checkpoint()
    saved = optimizer.state_dict()
    model = Net().to(META)
    resumed = torch.optim.Adam(model.parameters(), lr=0.01)
    resumed.load_state_dict(saved)
    state = resumed.state[model.body.weight]
    assert state["exp_avg"].device == META and state["exp_avg_sq"].device == META
    assert state["step"].device.type == "cpu"


def test_loading_the_optimizer_before_moving_the_model_leaves_its_state_behind():
    """Loaded before model.to(), the optimizer's state stays on the old device: Module.to does not move it.

    zh: 在 model.to() 之前加载优化器状态，状态就留在原来的设备上：Module.to 不会移动它。
    """
    _, optimizer = trained_checkpoint()
    model = Net()
    resumed = torch.optim.Adam(model.parameters(), lr=0.01)
    resumed.load_state_dict(optimizer.state_dict())
    model.to(torch.float64)  # a conversion that keeps the Parameter objects, like a move to a GPU does
    state = resumed.state[model.body.weight]
    assert model.body.weight.dtype == torch.float64 and state["exp_avg"].dtype == torch.float32


def test_moving_a_model_keeps_its_parameter_objects_unless_overwrite_is_set():
    """Module.to keeps Parameter objects; towards meta, or with overwrite_module_params_on_conversion, it replaces them.

    zh: Module.to 保留原来的 Parameter 对象；移到 meta 时或开启 overwrite_module_params_on_conversion 后会换成新的。
    """
    model = Net()
    weight = model.body.weight
    model.to(torch.float64)
    assert model.body.weight is weight
    model.to(META)
    assert model.body.weight is not weight
    model = Net()
    weight = model.body.weight
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        model.to(torch.float64)
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(False)
    assert model.body.weight is not weight


def test_the_courses_resume_puts_everything_on_the_device_and_keeps_the_state(tmp_path):
    """The course's resume (model, .to, optimizer, load both) puts parameters and state on the device, values intact.

    zh: 课程的 resume（构造模型、.to、构造优化器、加载两份状态）把参数和状态都放到目标设备上，数值不变。
    """
    model, optimizer = trained_checkpoint()
    path = gpu_checkpoint({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 2},
                          str(tmp_path / "resume.pt"))
    resume = solution(RESUME_SOLUTION)["resume"]
    on_meta, meta_optimizer, epoch = resume(path, META)
    assert epoch == 2 and all(p.device == META for p in on_meta.parameters())
    assert meta_optimizer.state[on_meta.body.weight]["exp_avg"].device == META
    here, here_optimizer, _ = resume(path, torch.device("cpu"))
    assert torch.equal(here.body.weight, model.body.weight)
    assert torch.equal(here_optimizer.state[here.body.weight]["exp_avg"], optimizer.state[model.body.weight]["exp_avg"])


def test_after_map_location_device_adams_step_stays_on_the_device(tmp_path):
    """After torch.load(map_location=device), load_state_dict leaves Adam's step counts on that device.

    zh: 用 torch.load(map_location=device) 加载后，load_state_dict 让 Adam 的 step 计数留在该设备上。
    """
    _, optimizer = trained_checkpoint()
    path = tmp_path / "optimizer.pt"
    torch.save({"optimizer": optimizer.state_dict()}, path)
    checkpoint = torch.load(path, map_location=META, weights_only=True)
    model = Net().to(META)
    resumed = torch.optim.Adam(model.parameters(), lr=0.01)
    resumed.load_state_dict(checkpoint["optimizer"])
    assert all(state["step"].device == META for state in resumed.state.values())


def test_a_default_adam_creates_its_step_counts_on_the_cpu_and_reads_them_as_numbers():
    """A default Adam creates `step` on the CPU for parameters elsewhere and steps: it reads the count with .item().

    zh: 默认的 Adam 即使参数在别的设备上，也把 `step` 创建在 CPU 上，并且照常更新：它用 .item() 读取 step。
    """
    model = Net().to(META)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    optimizer.step()  # meta parameters, CPU step counts: no device error
    assert all(state["step"].device == torch.device("cpu") for state in optimizer.state.values())
    read = inspect.getsource(importlib.import_module("torch.optim.optimizer")._get_value)  # how Adam reads a count
    assert ".item()" in read
    assert "_get_value(step_t)" in inspect.getsource(importlib.import_module("torch.optim.adam"))


def test_a_state_saved_from_a_capturable_adam_gets_its_step_counts_moved_to_each_parameters_device():
    """load_state_dict moves the step counts to each parameter's device when the saved state is capturable (or fused).

    zh: 保存的状态来自 capturable（或 fused）的 Adam 时，load_state_dict 会把 step 计数移到各自参数所在的设备上。
    """
    _, optimizer = trained_checkpoint()
    state = optimizer.state_dict()  # a default Adam's: step counts on the CPU
    model = Net().to(META)
    default = torch.optim.Adam(model.parameters(), lr=0.01)
    default.load_state_dict(state)
    assert all(s["step"].device == torch.device("cpu") for s in default.state.values())
    # What a capturable Adam saves (on a GPU): the same state, its groups marked capturable. The saved groups'
    # settings are the ones load_state_dict follows.
    for group in state["param_groups"]:
        group["capturable"] = True
    resumed = torch.optim.Adam(model.parameters(), lr=0.01, capturable=True)
    resumed.load_state_dict(state)
    assert all(s["step"].device == META and s["step"].dtype == torch.float32 for s in resumed.state.values())


def test_weights_only_is_an_argument_of_torch_load():
    """`torch.load` takes `weights_only` (an argument since PyTorch 1.13, per its documentation).

    zh: `torch.load` 接受 `weights_only` 参数（据文档，PyTorch 1.13 起就有）。
    """
    assert "weights_only" in inspect.signature(torch.load).parameters


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_gpu_a_real_save_on_a_gpu_writes_the_same_tags(cuda, tmp_path):
    """On a GPU, torch.save of a state_dict on cuda:0 records "cuda:0", as the lab's gpu_checkpoint does.

    zh: 在 GPU 上，torch.save 保存 cuda:0 上的 state_dict 时记下的是 "cuda:0"，与实验的 gpu_checkpoint 相同。
    """
    torch.save(Net().to(cuda).state_dict(), tmp_path / "real.pt")
    gpu_checkpoint(Net().state_dict(), str(tmp_path / "lab.pt"))
    assert set(storage_locations(str(tmp_path / "real.pt"))) == {"cuda:0"}
    assert storage_locations(str(tmp_path / "real.pt")) == storage_locations(str(tmp_path / "lab.pt"))


@pytest.mark.gpu
def test_gpu_a_checkpoint_naming_a_missing_gpu_gives_the_device_count_wording(cuda, tmp_path):
    """On a GPU machine, a checkpoint tagged one past the last GPU says "... but torch.cuda.device_count() is N".

    zh: 在有 GPU 的机器上，标记为最后一块 GPU 之后编号的检查点报 "... but torch.cuda.device_count() is N"。
    """
    count = torch.cuda.device_count()
    path = gpu_checkpoint(Net().state_dict(), str(tmp_path / "gpu.pt"), f"cuda:{count}")
    with pytest.raises(RuntimeError) as info:
        torch.load(path)
    assert str(info.value).startswith(
        f"Attempting to deserialize object on CUDA device {count} but torch.cuda.device_count() is {count}."
    )


@pytest.mark.gpu
def test_gpu_adam_with_state_left_on_the_cpu_fails_to_step(cuda):
    """On a GPU, Adam whose state was loaded before model.to(cuda) fails at its next step.

    zh: 在 GPU 上，如果 Adam 的状态是在 model.to(cuda) 之前加载的，它的下一步 step 会失败。
    """
    _, optimizer = trained_checkpoint()
    model = Net()
    resumed = torch.optim.Adam(model.parameters(), lr=0.01)
    resumed.load_state_dict(optimizer.state_dict())
    model.to(cuda)
    model(torch.ones(2, 4, device=cuda)).sum().backward()
    with pytest.raises(RuntimeError):
        resumed.step()
