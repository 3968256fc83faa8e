"""Claims tests for chapter 1 (devices 101): each test proves one statement the chapter's page or lab makes.

Every test fails if its statement is false on the installed torch. CPU tests use the `meta` device as an
honest second device (it is a real device that needs no hardware), and the redispatch trick to run the
real generated CUDA device check without a GPU. Tests marked ``gpu`` run on a CUDA GPU only.
"""

import re
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.torch_version import TorchVersion
from torch.utils._python_dispatch import TorchDispatchMode

from devicelab.chapters.basics import addmm_check_message

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from build_notebooks import code_without_comments  # noqa: E402

PAGES = {lang: ROOT / "docs" / lang / "01-devices.md" for lang in ("en", "zh")}
META = torch.device("meta")
CUDA_KERNEL = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
NEW_WORDING = TorchVersion(torch.__version__) >= (2, 8)  # the generated check was reworded in 2.8.0

SAME_DEVICE_28 = (
    "Expected all tensors to be on the same device, but got {arg} is on {found}, different from other tensors "
    "on {want} (when checking argument in method {op})"
)
SAME_DEVICE_27 = (
    "Expected all tensors to be on the same device, but found at least two devices, {want} and {found}! "
    "(when checking argument for argument {arg} in method {op})"
)


def check_wording(arg: str, found: str, want: str, op: str = "wrapper_CUDA_addmm") -> str:
    """The installed torch's generated device check: argument `arg` on `found`, the first tensor on `want`."""
    return (SAME_DEVICE_28 if NEW_WORDING else SAME_DEVICE_27).format(arg=arg, found=found, want=want, op=op)


def addmm_wording(want: str) -> str:
    """What the installed torch's generated addmm check says when mat1 is on the CPU and the rest on `want`."""
    return check_wording("mat1", "cpu", want)


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a page, unindented (content tabs indent them by four spaces)."""
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", page.read_text(encoding="utf-8"), re.M | re.S)
    return ["\n".join(line[len(indent):] for line in body.splitlines()) for indent, body in blocks]


def page_block(containing: str) -> str:
    """The one python block of the English page that contains `containing`."""
    found = [block for block in python_blocks(PAGES["en"]) if containing in block]
    assert len(found) == 1, f"expected one block with {containing!r}, found {len(found)}"
    return found[0]


class OpLog(TorchDispatchMode):
    """Records every aten op (and its arguments) that runs below autograd."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[object, tuple]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args))
        return func(*args, **(kwargs or {}))


@pytest.fixture
def default_device_restored():
    old = torch.get_default_device()
    try:
        yield
    finally:
        torch.set_default_device(None if old.type == "cpu" else old)  # "cpu" would leave a mode pushed


# --------------------------------------------------------------------------------------------- CPU


def test_a_tensor_created_without_device_is_on_the_cpu(default_device_restored):
    """A tensor created without device= is on the CPU (the default device, when nobody changed it).

    zh: 不传 device= 创建的张量在 CPU 上（没人改过默认设备时，默认设备就是 CPU）。
    """
    torch.set_default_device(None)  # the default: no device mode
    assert torch.zeros(3).device == torch.device("cpu")
    assert torch.randn(2, 2).device.type == "cpu"
    assert torch.tensor([1, 2]).device.type == "cpu"


def test_set_default_device_changes_where_tensors_without_device_are_created(default_device_restored):
    """torch.set_default_device changes the device of tensors created without device=.

    zh: torch.set_default_device 会改变不传 device= 创建的张量所在的设备。
    """
    torch.set_default_device(META)
    assert torch.zeros(3).device == META
    torch.set_default_device(None)  # the default: no device mode
    assert torch.zeros(3).device.type == "cpu"


def test_device_argument_creates_the_tensor_on_that_device():
    """Passing device= creates the tensor on that device.

    zh: 传入 device= 时，张量直接创建在该设备上。
    """
    assert torch.zeros(3, device=META).device == META


def test_tensor_to_returns_a_moved_copy_and_leaves_the_original_where_it_was():
    """Tensor.to(device) returns a new tensor on that device and never changes the tensor it is called on.

    zh: Tensor.to(device) 返回该设备上的一个新张量，调用它的那个张量本身不会变。
    """
    x = torch.zeros(3)
    y = x.to(META)
    assert y is not x
    assert y.device == META
    assert x.device.type == "cpu"
    x.to(META)  # the result thrown away: x does not move
    assert x.device.type == "cpu"


def test_tensor_to_returns_the_tensor_itself_when_device_and_dtype_already_match():
    """When a tensor already has the device and dtype asked for, Tensor.to() returns the tensor itself.

    zh: 张量的设备和 dtype 已与要求的相同时，Tensor.to() 直接返回这个张量本身。
    """
    t = torch.zeros(3)
    assert t.to("cpu") is t
    assert t.to(torch.device("cpu")) is t
    assert t.to(torch.float32) is t
    assert t.to("cpu", torch.float32) is t
    assert t.to(torch.float64) is not t  # a different dtype is a new tensor


def test_module_to_moves_parameters_and_buffers_in_place_and_returns_the_module():
    """Module.to() moves the module's parameters and buffers and returns the module itself.

    zh: Module.to() 移动模块的参数和缓冲区，并返回模块本身。
    """
    model = nn.Sequential(nn.Linear(2, 4), nn.BatchNorm1d(4))
    assert model.to(META) is model
    tensors = [*model.parameters(), *model.buffers()]
    assert len(tensors) == 7  # weight, bias; weight, bias, running mean, running var, batches tracked
    assert all(t.device == META for t in tensors)


def test_assigning_module_to_back_to_the_same_name_is_the_same_model():
    """model = model.to(device) is fine too: the name still refers to the same model.

    zh: 写成 model = model.to(device) 也没问题：这个名字指向的仍是同一个模型。
    """
    model = nn.Linear(2, 2)
    before = model
    model = model.to(META)
    assert model is before and model.weight.device == META


def test_cuda_device_without_an_index_is_not_equal_to_cuda_0_but_has_the_same_type():
    """torch.device('cuda') == torch.device('cuda:0') is False; their .type is the same.

    zh: torch.device('cuda') == torch.device('cuda:0') 的结果是 False；两者的 .type 相同。
    """
    assert torch.device("cuda") != torch.device("cuda:0")
    assert torch.device("cuda").type == torch.device("cuda:0").type == "cuda"
    assert torch.device("cuda").index is None and torch.device("cuda:0").index == 0


def test_to_another_tensors_device_puts_a_tensor_next_to_it():
    """x.to(y.device) puts x on y's own device.

    zh: x.to(y.device) 把 x 放到 y 所在的设备上。
    """
    x, y = torch.zeros(2), torch.zeros(2, device=META)
    assert x.to(y.device).device == y.device


def test_a_meta_tensor_has_shape_and_dtype_but_stores_no_values():
    """A tensor on `meta` has a shape and a dtype but no values; its .device says meta.

    zh: `meta` 上的张量有形状和 dtype，但没有数值；它的 .device 显示 meta。
    """
    z = torch.zeros(3).to(META)
    assert str(z.device) == "meta"
    assert z.shape == (3,) and z.dtype == torch.float32
    with pytest.raises(NotImplementedError, match="no data"):
        z.tolist()


def test_nn_linear_on_a_batch_of_vectors_is_one_addmm_of_bias_input_and_weight_t():
    """For a 2-D input, nn.Linear computes bias + input @ weight.T with one addmm(bias, input, weight.T).

    zh: 输入是二维时，nn.Linear 用一次 addmm(bias, input, weight.T) 算出 bias + input @ weight.T。
    """
    layer = nn.Linear(2, 3)
    inputs = torch.randn(4, 2)
    with OpLog() as log:
        out = layer(inputs)
    addmm = [args for func, args in log.calls if func is torch.ops.aten.addmm.default]
    assert len(addmm) == 1
    bias, mat1, mat2 = addmm[0]
    assert mat1 is inputs  # mat1 is the layer's input
    assert bias.data_ptr() == layer.bias.data_ptr() and bias.shape == layer.bias.shape
    assert mat2.data_ptr() == layer.weight.data_ptr() and mat2.shape == layer.weight.T.shape
    assert torch.allclose(out, layer.bias + inputs @ layer.weight.T)


def test_addmm_arguments_are_named_self_mat1_and_mat2():
    """addmm's tensor arguments are named self, mat1 and mat2.

    zh: addmm 的三个张量参数名为 self、mat1 和 mat2。
    """
    names = [a.name for a in torch.ops.aten.addmm.default._schema.arguments]
    assert names[:3] == ["self", "mat1", "mat2"]


def test_the_installed_torch_words_the_generated_addmm_check_with_op_argument_and_devices():
    """addmm's CUDA kernel checks devices first; a CPU mat1 among meta tensors gets the version's wording.

    zh: addmm 的 CUDA 内核先检查设备：其余张量在 meta 上而 mat1 在 CPU 上时，报出所装版本的措辞。
    """
    with pytest.raises(RuntimeError) as caught:
        torch.ops.aten.addmm.default.redispatch(
            CUDA_KERNEL, torch.zeros(2, device=META), torch.zeros(4, 2), torch.zeros(2, 2, device=META)
        )
    assert str(caught.value) == addmm_wording("meta")


def test_the_labs_addmm_check_message_is_the_installed_torchs_wording():
    """The lab's cell prints the installed torch's wording, with meta where a GPU says cuda:0.

    zh: 实验里这个单元格打印的是已安装 torch 的措辞，只是 GPU 显示 cuda:0 的地方显示 meta。
    """
    assert addmm_check_message() == addmm_wording("meta")


@pytest.mark.skipif(not hasattr(torch, "accelerator"), reason="torch.accelerator exists since 2.6")
@pytest.mark.skipif(torch.version.cuda is None, reason="the claim is about a CUDA build of PyTorch")
@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without a GPU")
def test_plain_current_accelerator_says_cuda_without_a_gpu_and_check_available_says_none():
    """On a CUDA build without a GPU, current_accelerator() answers cuda; check_available=True answers None.

    zh: 没有 GPU 的 CUDA 版 PyTorch 上，current_accelerator() 返回 cuda；加上 check_available=True 返回 None。
    """
    assert torch.accelerator.current_accelerator() == torch.device("cuda")
    assert torch.accelerator.is_available() is False
    try:
        checked = torch.accelerator.current_accelerator(check_available=True)
    except TypeError:
        pytest.skip("current_accelerator(check_available=...) exists since torch 2.7")
    assert checked is None


@pytest.mark.skipif(torch.version.cuda is None, reason="the claim is about a CUDA build of PyTorch")
@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without a GPU")
def test_moving_to_cuda_on_a_cuda_build_without_a_gpu_fails():
    """On a CUDA build without a GPU, the first .to('cuda') fails.

    zh: 在没有 GPU 的 CUDA 版 PyTorch 上，第一次 .to('cuda') 就会失败。
    """
    with pytest.raises(RuntimeError):
        torch.zeros(1).to("cuda")


def test_the_pages_pick_device_follows_cuda_then_mps_then_cpu(monkeypatch):
    """The page's pick_device() picks CUDA, then Apple MPS, then the CPU.

    zh: 页面上的 pick_device() 优先选 CUDA，其次是 Apple MPS，最后是 CPU。
    """
    namespace: dict[str, object] = {}
    exec(page_block("def pick_device"), namespace)
    pick = namespace["pick_device"]
    assert namespace["device"] == pick()
    for cuda, mps, expected in [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")]:
        monkeypatch.setattr(torch.cuda, "is_available", lambda cuda=cuda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda mps=mps: mps)
        assert pick() == torch.device(expected)


@pytest.mark.skipif(not hasattr(torch, "accelerator"), reason="torch.accelerator exists since 2.6")
def test_the_pages_torch_accelerator_line_gives_an_available_accelerator_or_the_cpu():
    """current_accelerator(check_available=True) or torch.device('cpu') gives a usable device.

    zh: current_accelerator(check_available=True) or torch.device('cpu') 总能给出一个可用的设备。
    """
    namespace: dict[str, object] = {"torch": torch}
    try:
        exec(page_block("check_available=True) or"), namespace)
    except TypeError:
        pytest.skip("current_accelerator(check_available=...) exists since torch 2.7")
    device = namespace["device"]
    if torch.accelerator.is_available():
        assert device == torch.accelerator.current_accelerator()
    else:
        assert device == torch.device("cpu")
    torch.zeros(1).to(device)  # the first move works


def page_fix_namespace(device: torch.device) -> dict[str, object]:
    torch.manual_seed(0)
    return {
        "torch": torch,
        "device": device,
        "model": nn.Linear(2, 2),
        "input_data": torch.randn(4, 2),
        "labels": torch.randint(0, 2, (4,)),
    }


def test_the_pages_before_code_leaves_the_batch_on_the_cpu():
    """The page's buggy code moves the model but leaves input_data and labels on the CPU.

    zh: 页面上有错的代码移动了模型，却把 input_data 和 labels 留在了 CPU 上。
    """
    namespace = page_fix_namespace(META)
    with pytest.raises(RuntimeError):  # a meta model fed CPU data (a GPU prints the check instead)
        exec(page_block("# returns a moved copy, which is thrown away"), namespace)
    assert namespace["model"].weight.device == META
    assert namespace["input_data"].device.type == "cpu" and namespace["labels"].device.type == "cpu"


def test_on_a_cpu_only_machine_the_forgotten_assignment_goes_unnoticed():
    """With device = cpu, the page's buggy code runs without error: the mistake goes unnoticed.

    zh: device 为 cpu 时，页面上有错的代码照常运行、不报错：这个错误不会被发现。
    """
    namespace = page_fix_namespace(torch.device("cpu"))
    exec(page_block("# returns a moved copy, which is thrown away"), namespace)
    assert namespace["outputs"].shape == (4, 2)


def test_the_pages_after_code_puts_model_and_batch_on_the_device():
    """The page's fixed code puts the model, the inputs and the labels on the device.

    zh: 页面上修正后的代码把模型、输入和标签都放到了该设备上。
    """
    namespace = page_fix_namespace(META)
    exec(page_block("input_data = input_data.to(device)"), namespace)
    assert namespace["model"].weight.device == META
    assert namespace["input_data"].device == META and namespace["labels"].device == META
    assert namespace["outputs"].device == META


def test_both_pages_show_the_same_code():
    """The Chinese page's code blocks are the English page's (comments may be translated).

    zh: 中文页面的代码块与英文页面的相同（注释可以翻译）。
    """
    zh, en = python_blocks(PAGES["zh"]), python_blocks(PAGES["en"])
    assert [code_without_comments(b) for b in zh] == [code_without_comments(b) for b in en]


def test_a_dataloader_over_cpu_tensors_hands_out_cpu_batches():
    """Batches from a DataLoader over CPU tensors are on the CPU: they need a move.

    zh: 基于 CPU 张量的 DataLoader 给出的批次在 CPU 上：需要移动。
    """
    data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.randint(0, 2, (8,)))
    inputs, labels = next(iter(torch.utils.data.DataLoader(data, batch_size=4)))
    assert inputs.device.type == "cpu" and labels.device.type == "cpu"


def test_the_check_names_the_first_argument_whose_device_differs_from_the_first_tensors():
    """The generated check names the first argument on another device than the first tensor, misplaced or not.

    zh: 自动生成的检查报出第一个与首个张量不在同一设备上的参数，不管放错的是不是它。
    """
    cases = [  # (bias, mat1, mat2) devices -> the argument named, its device, the first tensor's device
        (("meta", "cpu", "meta"), ("mat1", "cpu", "meta")),
        (("cpu", "meta", "cpu"), ("mat1", "meta", "cpu")),
        (("cpu", "cpu", "meta"), ("mat2", "meta", "cpu")),
        (("meta", "meta", "cpu"), ("mat2", "cpu", "meta")),
    ]
    for (bias, mat1, mat2), (arg, found, want) in cases:
        with pytest.raises(RuntimeError) as caught:
            torch.ops.aten.addmm.default.redispatch(
                CUDA_KERNEL,
                torch.zeros(2, device=bias),
                torch.zeros(4, 2, device=mat1),
                torch.zeros(2, 2, device=mat2),
            )
        assert str(caught.value) == check_wording(arg, found, want)


def test_a_cpu_linear_fed_an_input_on_the_gpu_names_mat1_although_the_layer_is_what_must_move():
    """A linear layer left on the CPU fed a GPU batch: the check names mat1 (the input), on the GPU device.

    zh: 留在 CPU 上的线性层收到 GPU 上的批次时，检查报出 mat1（输入），设备为 GPU。
    """
    assert addmm_check_message(model_device="cpu", input_device="meta") == check_wording("mat1", "meta", "cpu")


def test_nn_embedding_looks_up_its_rows_with_index_select_of_the_table_and_the_ids():
    """nn.Embedding runs index_select(weight, 0, ids): the table is the first tensor, the ids the `index`.

    zh: nn.Embedding 执行 index_select(weight, 0, ids)：嵌入表是第一个张量，ids 是 `index`。
    """
    embedding = nn.Embedding(5, 2)
    with torch.profiler.profile() as profile:
        out = embedding(torch.tensor([1, 3]))
    names = [event.name for event in profile.events()]
    assert "aten::embedding" in names and "aten::index_select" in names
    assert torch.equal(out, torch.index_select(embedding.weight, 0, torch.tensor([1, 3])))
    arguments = [a.name for a in torch.ops.aten.index_select.default._schema.arguments]
    assert arguments == ["self", "dim", "index"]


def test_a_cpu_embedding_table_fed_ids_on_the_gpu_names_index_although_the_table_is_what_must_move():
    """index_select's check, with the table on the CPU and the ids "on the GPU" (meta), names `index`.

    zh: 嵌入表在 CPU 上、ids “在 GPU 上”（meta）时，index_select 的检查报出 `index`。
    """
    with pytest.raises(RuntimeError) as caught:
        torch.ops.aten.index_select.default.redispatch(
            CUDA_KERNEL, torch.zeros(5, 2), 0, torch.zeros(3, dtype=torch.long, device=META)
        )
    assert str(caught.value) == check_wording("index", "meta", "cpu", op="wrapper_CUDA__index_select")


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_linear_on_cuda_fed_a_cpu_input_raises_the_addmm_check_naming_mat1(cuda):
    """A CUDA nn.Linear fed a CPU batch raises the generated check: mat1 on cpu, others on cuda:0, addmm.

    zh: CUDA 上的 nn.Linear 收到 CPU 批次时抛出 addmm 自动生成的检查：mat1 在 cpu 上，其余在 cuda:0 上。
    """
    torch.cuda.set_device(0)
    model = nn.Linear(2, 2)
    input_data = torch.randn(4, 2)
    model.to(cuda)
    input_data.to(cuda)  # thrown away, as in the seed
    with pytest.raises(RuntimeError) as caught:
        model(input_data)
    assert str(caught.value) == addmm_wording("cuda:0")


@pytest.mark.gpu
def test_a_cuda_tensors_device_carries_its_gpu_index(cuda):
    """torch.zeros(3, device='cuda').device prints cuda:0, which is not equal to torch.device('cuda').

    zh: torch.zeros(3, device='cuda').device 打印为 cuda:0，不等于 torch.device('cuda')。
    """
    torch.cuda.set_device(0)
    y = torch.zeros(3, device="cuda")
    assert str(y.device) == "cuda:0"
    assert y.device != torch.device("cuda")
    assert y.device.type == torch.device("cuda").type


@pytest.mark.gpu
def test_zero_dim_cpu_tensor_combines_with_a_cuda_tensor(cuda):
    """A 0-dim CPU tensor combines with a CUDA tensor without error (it acts as a number).

    zh: 0 维的 CPU 张量可以和 CUDA 张量一起运算，不会报错（它被当作一个数）。
    """
    result = torch.tensor(2.0) * torch.ones(3, device=cuda)
    assert result.device.type == "cuda"
    assert torch.equal(result.cpu(), torch.full((3,), 2.0))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.tensor([2.0]) * torch.ones(3, device=cuda)  # one dimension: no longer a number
    # the linter's DL505/DL506 leave a 0-dim CPU tensor alone in comparisons and torch.maximum/minimum too
    ones = torch.ones(3, device=cuda)
    assert (torch.tensor(0.5) < ones).all() and torch.maximum(torch.tensor(2.0), ones).device.type == "cuda"


@pytest.mark.gpu
def test_tensor_to_cuda_leaves_the_original_and_module_to_cuda_returns_the_module(cuda):
    """On a real GPU: x.to('cuda') leaves x on the CPU; model.to('cuda') moves the model and returns it.

    zh: 在真实 GPU 上：x.to('cuda') 后 x 仍在 CPU 上；model.to('cuda') 移动模型并返回它本身。
    """
    x = torch.zeros(3)
    y = x.to(cuda)
    assert x.device.type == "cpu" and y.device.type == "cuda"
    model = nn.Linear(2, 2)
    assert model.to(cuda) is model and model.weight.is_cuda


@pytest.mark.gpu
@pytest.mark.skipif(not hasattr(torch, "accelerator"), reason="torch.accelerator exists since 2.6")
def test_current_accelerator_with_check_available_answers_cuda_on_a_gpu(cuda):
    """With a GPU, current_accelerator(check_available=True) answers cuda.

    zh: 有 GPU 时，current_accelerator(check_available=True) 返回 cuda。
    """
    try:
        found = torch.accelerator.current_accelerator(check_available=True)
    except TypeError:
        pytest.skip("current_accelerator(check_available=...) exists since torch 2.7")
    assert found is not None and found.type == "cuda"


@pytest.mark.gpu
def test_a_cpu_linear_fed_a_cuda_input_names_mat1_on_cuda(cuda):
    """On a real GPU: a CPU nn.Linear fed a CUDA batch raises the check naming mat1 on cuda:0, others on cpu.

    zh: 在真实 GPU 上：CPU 上的 nn.Linear 收到 CUDA 批次时，检查报出在 cuda:0 上的 mat1，其余在 cpu 上。
    """
    torch.cuda.set_device(0)
    with pytest.raises(RuntimeError) as caught:
        nn.Linear(2, 2)(torch.randn(4, 2, device=cuda))
    assert str(caught.value) == check_wording("mat1", "cuda:0", "cpu")


@pytest.mark.gpu
def test_a_cpu_embedding_fed_cuda_ids_names_index_on_cuda(cuda):
    """On a real GPU: a CPU nn.Embedding fed CUDA ids raises the check naming index on cuda:0, others on cpu.

    zh: 在真实 GPU 上：CPU 上的 nn.Embedding 收到 CUDA 上的 id 时，检查报出在 cuda:0 上的 index，其余在 cpu 上。
    """
    torch.cuda.set_device(0)
    with pytest.raises(RuntimeError) as caught:
        nn.Embedding(5, 2)(torch.tensor([1, 3], device=cuda))
    assert str(caught.value) == check_wording("index", "cuda:0", "cpu", op="wrapper_CUDA__index_select")
