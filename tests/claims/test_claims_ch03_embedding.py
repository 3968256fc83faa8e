"""Claims tests for chapter 3 (embedding indices and labels): each test proves one statement the chapter makes.

Every test fails if its statement is false on the installed torch. On the CPU, the real generated CUDA
device check is reached by redispatching an op to its CUDA kernel with a `meta` tensor standing in for the
GPU tensor (it prints `meta` where a GPU prints `cuda:0`). Tests marked ``gpu`` run on a CUDA GPU only.
"""

import ast
import re
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.torch_version import TorchVersion

from devicelab.errors import lookup, match_kind

SAME_DEVICE = "Expected all tensors to be on the same device"
OLD_WORDING = "Input, output and indices must be on the current device"
CUDA_KERNEL = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
META = torch.device("meta")
SOURCE = Path(__file__).resolve().parents[2] / "solutions" / "source" / "03-embedding.md"


def _lab_examples() -> dict[str, str]:
    """The GPU wording each reproduce step of the lab shows without a GPU: its `example=`, by step name."""
    source = SOURCE.read_text(encoding="utf-8")
    steps = re.finditer(r"^@lab\.reproduce\((.*?)\)\s*\ndef (\w+)\(", source, re.S | re.M)
    examples = {}
    for step in steps:
        call = ast.parse(f"reproduce({step.group(1)})", mode="eval").body
        examples[step.group(2)] = next(ast.literal_eval(k.value) for k in call.keywords if k.arg == "example")
    return examples


EXPECTED = _lab_examples()


def _message(raise_it) -> str:
    with pytest.raises(RuntimeError) as error:
        raise_it()
    return str(error.value)


def _index_select_on_cuda_kernel() -> str:
    """index_select's CUDA kernel given a meta table (the GPU weight) and CPU indices (the token ids)."""
    return _message(
        lambda: torch.ops.aten.index_select.default.redispatch(
            CUDA_KERNEL, torch.randn(10, 3, device=META), 0, torch.zeros(4, dtype=torch.long)
        )
    )


def _nll_loss_on_cuda_kernel() -> str:
    """nll_loss_forward's CUDA kernel given meta log-probabilities (GPU logits) and CPU targets (labels)."""
    return _message(
        lambda: torch.ops.aten.nll_loss_forward.default.redispatch(
            CUDA_KERNEL, torch.randn(4, 3, device=META), torch.zeros(4, dtype=torch.long), None, 1, -100
        )
    )


def _index_select_with_a_cpu_table_on_cuda_kernel() -> str:
    """index_select's CUDA kernel given a CPU table (a model left on the CPU) and meta indices (GPU token ids)."""
    return _message(
        lambda: torch.ops.aten.index_select.default.redispatch(
            CUDA_KERNEL, torch.randn(10, 3), 0, torch.zeros(4, dtype=torch.long, device=META)
        )
    )


def _as_on_a_gpu_reversed(message: str) -> str:
    """The stand-in's message for a CPU table fed GPU ids, as a GPU prints it: the meta index is cuda:0 there."""
    return message.replace("is on meta,", "is on cuda:0,")


def _addmm_on_cuda_kernel() -> str:
    return _message(
        lambda: torch.ops.aten.addmm.default.redispatch(
            CUDA_KERNEL, torch.randn(2, device=META), torch.randn(2, 2), torch.randn(2, 2, device=META)
        )
    )


def _as_on_a_gpu(message: str) -> str:
    """The stand-in's message as a GPU prints it: the meta device is cuda:0 there."""
    return message.replace("tensors on meta", "tensors on cuda:0")


def _ops_called_inside(run, parent: str) -> list[str]:
    """The aten ops the profiler records directly under `parent` while `run()` executes on the CPU."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return [e.name for e in prof.events() if e.cpu_parent is not None and e.cpu_parent.name == parent]


class AutoMove(nn.Module):
    """The lab's third fix: forward moves its input to the device of the parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(10, 3)
        self.fc = nn.Linear(3, 4)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        token_ids = token_ids.to(next(self.parameters()).device)
        return self.fc(self.embedding(token_ids).mean(dim=1))


# --------------------------------------------------------------------------------------------- CPU


def test_embedding_is_a_lookup_that_picks_rows_of_its_weight_with_index_select():
    """nn.Embedding is a lookup table: its forward returns the rows of its weight, fetched with index_select.

    zh: nn.Embedding 就是一张查找表：forward 返回其权重中的若干行，由 index_select 取出。
    """
    embedding = nn.Embedding(10, 3)
    token_ids = torch.tensor([[1, 4, 4], [0, 9, 2]])
    assert torch.equal(embedding(token_ids), embedding.weight[token_ids])
    assert "aten::index_select" in _ops_called_inside(lambda: embedding(token_ids), "aten::embedding")


def test_embedding_uses_one_kernel_for_cpu_and_cuda():
    """nn.Embedding fetches its rows with index_select on CPU and GPU alike: one composite kernel serves both.

    zh: nn.Embedding 在 CPU 和 GPU 上都用 index_select 取行：两者共用同一个组合（composite）内核。
    """
    table = torch._C._dispatch_dump("aten::embedding")
    kernels = {line.split(":")[0] for line in table.splitlines() if ": registered at" in line}
    assert "CompositeExplicitAutograd[alias]" in kernels
    assert not kernels & {"CPU", "CUDA"}


def test_index_select_device_check_names_index_for_cpu_token_ids():
    """The CUDA index_select kernel given a GPU table and CPU ids raises the generated check naming `index`.

    zh: 嵌入表在 GPU 上、id 在 CPU 上时，CUDA 的 index_select 内核抛出自动生成的检查，点名 `index`。
    """
    message = _index_select_on_cuda_kernel()
    found = match_kind("same_device", message)
    assert found is not None
    assert found.fields["arg"] == "index" and found.fields["found"] == "cpu"
    assert found.fields["op"] == "wrapper_CUDA__index_select"
    assert found.chapter == "03-embedding"


def test_today_the_generated_check_stops_cpu_ids_before_the_old_wording():
    """For CPU indices into a CUDA index_select, current PyTorch prints the generated check, not the old wording.

    zh: CUDA 的 index_select 收到 CPU 上的索引时，当前的 PyTorch 打印自动生成的检查，而不是旧措辞。
    """
    message = _index_select_on_cuda_kernel()
    assert message.startswith(SAME_DEVICE)
    assert OLD_WORDING not in message


def test_cross_entropy_runs_log_softmax_then_nll_loss_forward():
    """nn.CrossEntropyLoss is a log-softmax followed by the negative log-likelihood (nll_loss_forward).

    zh: nn.CrossEntropyLoss 就是先做 log-softmax，再算负对数似然（nll_loss_forward）。
    """
    logits, labels = torch.randn(4, 3), torch.tensor([0, 2, 1, 2])
    inside = _ops_called_inside(lambda: nn.CrossEntropyLoss()(logits, labels), "aten::cross_entropy_loss")
    assert "aten::log_softmax" in inside and "aten::nll_loss_nd" in inside
    assert inside.index("aten::log_softmax") < inside.index("aten::nll_loss_nd")
    assert "aten::nll_loss_forward" in _ops_called_inside(
        lambda: nn.CrossEntropyLoss()(logits, labels), "aten::nll_loss"
    )


def test_cross_entropy_uses_the_labels_as_indices_into_the_log_probabilities():
    """CrossEntropyLoss picks, in each row of log-probabilities, the entry of the true class.

    zh: CrossEntropyLoss 在对数概率的每一行里取出真实类别对应的那一项。
    """
    logits, labels = torch.randn(5, 4), torch.tensor([3, 0, 1, 1, 2])
    picked = torch.log_softmax(logits, dim=1)[torch.arange(5), labels]
    assert torch.allclose(nn.CrossEntropyLoss()(logits, labels), -picked.mean())


def test_nll_loss_device_check_names_target_for_cpu_labels():
    """The CUDA nll_loss_forward kernel given GPU logits and CPU labels raises the generated check naming `target`.

    zh: logits 在 GPU 上、标签在 CPU 上时，CUDA 的 nll_loss_forward 内核抛出自动生成的检查，点名 `target`。
    """
    found = match_kind("same_device", _nll_loss_on_cuda_kernel())
    assert found is not None
    assert found.fields["arg"] == "target" and found.fields["found"] == "cpu"
    assert found.fields["op"] == "wrapper_CUDA_nll_loss_forward"
    assert found.chapter == "03-embedding"


def test_the_generated_check_is_one_sentence_for_many_ops_only_the_names_change():
    """The generated device check is one sentence for index_select, nll_loss_forward and addmm; only names change.

    zh: index_select、nll_loss_forward 和 addmm 自动生成的设备检查是同一句话，只有名字不同。
    """
    template = re.compile(
        r"^Expected all tensors to be on the same device, but got (\w+) is on (\w+), different from other "
        r"tensors on (\w+) \(when checking argument in method (\w+)\)$"
    )
    found = [template.match(m) for m in (_index_select_on_cuda_kernel(), _nll_loss_on_cuda_kernel(),
                                         _addmm_on_cuda_kernel())]
    assert all(found)
    assert len({m.group(1) for m in found}) == 3 and len({m.group(4) for m in found}) == 3


def test_a_cpu_table_fed_gpu_ids_names_index_on_the_gpu():
    """A CPU embedding table fed GPU ids makes the CUDA index_select check name `index`, on cuda:0, the ids' device.

    zh: CPU 上的嵌入表收到 GPU 上的 id 时，CUDA index_select 的检查报出 `index`，设备是 id 所在的 cuda:0。
    """
    message = _as_on_a_gpu_reversed(_index_select_with_a_cpu_table_on_cuda_kernel())
    assert message == (
        "Expected all tensors to be on the same device, but got index is on cuda:0, different from other tensors "
        "on cpu (when checking argument in method wrapper_CUDA__index_select)"
    )
    found = match_kind("same_device", message)
    assert found is not None and found.chapter == "03-embedding"
    assert (found.fields["arg"], found.fields["found"]) == ("index", "cuda:0")


def test_the_check_names_index_whichever_of_table_and_ids_is_misplaced():
    """The check names the argument differing from the first tensor (the table), whichever of the two is misplaced.

    zh: 检查报出的是设备与第一个张量（嵌入表）不同的参数，不管两者之中哪个放错了。
    """
    ids_misplaced = match_kind("same_device", _index_select_on_cuda_kernel())
    table_misplaced = match_kind("same_device", _index_select_with_a_cpu_table_on_cuda_kernel())
    assert ids_misplaced.fields["arg"] == table_misplaced.fields["arg"] == "index"
    assert ids_misplaced.fields["found"] == "cpu" and table_misplaced.fields["found"] == "meta"


def test_the_wordings_the_lab_expects_are_what_the_installed_torch_prints():
    """The lab's expected GPU wordings equal the installed torch's generated checks (meta read as cuda:0).

    zh: 实验预期的 GPU 报错措辞与已安装 torch 自动生成的检查一致（把 meta 读作 cuda:0）。
    """
    assert set(EXPECTED) == {"embed_cpu_token_ids", "loss_with_cpu_labels"}
    assert EXPECTED["embed_cpu_token_ids"] == _as_on_a_gpu(_index_select_on_cuda_kernel())
    assert EXPECTED["loss_with_cpu_labels"] == _as_on_a_gpu(_nll_loss_on_cuda_kernel())


@pytest.mark.parametrize(
    ("message", "arg"),
    [
        (OLD_WORDING, None),
        (EXPECTED["embed_cpu_token_ids"], "index"),
        (EXPECTED["loss_with_cpu_labels"], "target"),
        (
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            "(when checking argument for argument index in method wrapper_CUDA__index_select)",
            "index",
        ),
        (
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            "(when checking argument for argument target in method wrapper_CUDA_nll_loss_forward)",
            "target",
        ),
        (
            "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
            "(when checking argument for argument index in method wrapper_CUDA__index_select)",
            "index",
        ),
        (
            "Expected all tensors to be on the same device, but got index is on cuda:0, different from other "
            "tensors on cpu (when checking argument in method wrapper_CUDA__index_select)",
            "index",
        ),
        (
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            "(when checking argument for argument index in method wrapper__index_select)",
            "index",
        ),
        (
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            "(when checking argument for argument target in method wrapper_nll_loss_forward)",
            "target",
        ),
    ],
)
def test_every_wording_on_the_page_leads_to_this_chapter(message, arg):
    """Every wording the page quotes (old and new) is recognised by the error index and sent to chapter 3.

    zh: 页面引用的每种措辞（新旧都算）都能被错误索引识别，并指向第 3 章。
    """
    (found,) = lookup(message)
    assert found.chapter == "03-embedding"
    assert found.fields.get("arg") == arg


def test_module_to_moves_the_parameters_not_the_tensors_passed_to_the_model_later():
    """model.to(device) moves the model's parameters; the tensors you pass to it stay where they are.

    zh: model.to(device) 移动的是模型的参数；之后传给模型的张量仍留在原处。
    """
    token_ids = torch.zeros(2, 3, dtype=torch.long)
    model = nn.Embedding(10, 3).to(META)
    assert model.weight.device == META
    assert token_ids.device.type == "cpu"
    model(token_ids)  # a meta table looks CPU ids up without complaint: only real devices check
    assert token_ids.device.type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without a GPU")
def test_moving_to_a_fixed_cuda_fails_on_a_machine_without_a_gpu():
    """`.to("cuda")` raises on a machine without a GPU, so a forward that hard-codes it cannot run there.

    zh: 在没有 GPU 的机器上 `.to("cuda")` 会抛出异常，所以把它写死在 forward 里就无法在那里运行。
    """
    with pytest.raises((RuntimeError, AssertionError)):
        torch.zeros(2, dtype=torch.long).to("cuda")


def test_tensor_to_returns_a_new_tensor_and_leaves_the_original_where_it_was():
    """Tensor.to(device) returns a new tensor on that device; the original stays where it was.

    zh: Tensor.to(device) 返回该设备上的一个新张量；原张量留在原处。
    """
    token_ids = torch.zeros(2, 3, dtype=torch.long)
    moved = token_ids.to(META)
    assert moved is not token_ids
    assert moved.device == META and token_ids.device.type == "cpu"


def test_tensor_to_its_own_device_returns_the_same_tensor():
    """When a tensor is already on the device, .to() returns the very same tensor: no copy.

    zh: 张量已经在该设备上时，.to() 返回的就是同一个张量，不做复制。
    """
    token_ids = torch.zeros(2, 3, dtype=torch.long)
    assert token_ids.to("cpu") is token_ids
    assert token_ids.to(token_ids.device) is token_ids


def test_meta_tensors_have_shape_and_dtype_but_no_data():
    """A meta tensor has a shape and a dtype but holds no data: its values cannot be read.

    zh: meta 张量有形状和 dtype，但不存数据：读不出它的值。
    """
    t = torch.zeros(2, 3, dtype=torch.long).to(META)
    assert t.shape == (2, 3) and t.dtype == torch.long
    with pytest.raises(NotImplementedError, match="no data"):
        t.to("cpu")
    with pytest.raises(RuntimeError, match="meta"):
        t.sum().item()


def test_a_dataloader_over_cpu_tensors_yields_a_list_of_cpu_tensors():
    """A DataLoader over a TensorDataset of CPU tensors hands out each batch as a list of CPU tensors.

    zh: 基于 CPU 张量的 TensorDataset 的 DataLoader，给出的每个批次都是由 CPU 张量组成的列表。
    """
    data = torch.utils.data.TensorDataset(torch.zeros(8, 5, dtype=torch.long), torch.zeros(8, dtype=torch.long))
    batch = next(iter(torch.utils.data.DataLoader(data, batch_size=4)))
    assert isinstance(batch, list) and len(batch) == 2
    assert all(t.device.type == "cpu" for t in batch)


def test_moving_inputs_inside_forward_moves_nothing_for_the_labels():
    """A forward moving the ids to the parameters' device leaves the labels on the CPU, where the loss refuses them.

    zh: forward 把 id 移到参数所在的设备上，标签却仍留在 CPU 上，损失函数会拒绝它们。
    """
    model = AutoMove().to(META)
    token_ids, labels = torch.randint(0, 10, (4, 5)), torch.randint(0, 4, (4,))
    logits = model(token_ids)  # CPU ids are accepted: forward moved them
    assert logits.device == META
    assert labels.device.type == "cpu"
    with pytest.raises(RuntimeError):
        nn.CrossEntropyLoss()(logits, labels)
    assert nn.CrossEntropyLoss()(logits, labels.to(META)).device == META


def test_embedding_looks_rows_up_by_int64_or_int32_ids_only():
    """nn.Embedding accepts int64 and int32 ids and refuses floating-point ones.

    zh: nn.Embedding 接受 int64 和 int32 的 id，拒绝浮点类型的 id。
    """
    embedding = nn.Embedding(10, 3)
    ids = torch.tensor([1, 2, 3])
    assert torch.equal(embedding(ids), embedding(ids.to(torch.int32)))
    with pytest.raises(RuntimeError, match="Long, Int"):
        embedding(ids.float())


def test_cross_entropy_wants_integer_class_indices_for_one_label_per_row():
    """CrossEntropyLoss refuses float labels of shape (N,): class indices must be integers.

    zh: CrossEntropyLoss 拒绝形状为 (N,) 的浮点标签：类别索引必须是整数。
    """
    with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
        nn.CrossEntropyLoss()(torch.randn(4, 3), torch.tensor([0.0, 1.0, 2.0, 0.0]))


def test_cross_entropy_reads_float_targets_shaped_like_the_logits_as_class_probabilities():
    """CrossEntropyLoss reads float targets shaped like the logits as class probabilities: one-hot equals indices.

    zh: CrossEntropyLoss 把形状与 logits 相同的浮点 target 当作类别概率：one-hot 与类别索引结果相同。
    """
    logits, labels = torch.randn(5, 4), torch.tensor([3, 0, 1, 1, 2])
    one_hot = nn.functional.one_hot(labels, 4).float()
    assert torch.allclose(nn.CrossEntropyLoss()(logits, one_hot), nn.CrossEntropyLoss()(logits, labels))
    spread = torch.full((5, 4), 0.25)
    assert not torch.allclose(nn.CrossEntropyLoss()(logits, spread), nn.CrossEntropyLoss()(logits, labels))


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_cuda_embedding_fed_cpu_token_ids_raises_the_device_check_naming_index(cuda):
    """A CUDA nn.Embedding fed CPU token ids raises the generated device check naming `index` in index_select.

    zh: CUDA 上的 nn.Embedding 收到 CPU 上的 token id 时，抛出自动生成的设备检查，点名 index_select 的 `index`。
    """
    model = nn.Embedding(10, 3).to(cuda)
    with pytest.raises(RuntimeError) as caught:
        model(torch.randint(0, 10, (4, 5)))
    message = str(caught.value)
    found = match_kind("same_device", message)
    assert found is not None, message
    assert found.fields["arg"] == "index" and "index_select" in found.fields["op"]
    assert found.chapter == "03-embedding"
    assert OLD_WORDING not in message
    if TorchVersion(torch.__version__) >= (2, 8):
        assert message == EXPECTED["embed_cpu_token_ids"]


@pytest.mark.gpu
def test_cpu_labels_into_cross_entropy_with_cuda_logits_raise_naming_target(cuda):
    """CUDA logits with CPU labels in CrossEntropyLoss raise the generated device check naming `target`.

    zh: CrossEntropyLoss 收到 CUDA 上的 logits 和 CPU 上的标签时，抛出自动生成的设备检查，点名 `target`。
    """
    logits = torch.randn(4, 3, device=cuda)
    with pytest.raises(RuntimeError) as caught:
        nn.CrossEntropyLoss()(logits, torch.tensor([0, 2, 1, 2]))
    message = str(caught.value)
    found = match_kind("same_device", message)
    assert found is not None, message
    assert found.fields["arg"] == "target" and "nll_loss_forward" in found.fields["op"]
    if TorchVersion(torch.__version__) >= (2, 8):
        assert message == EXPECTED["loss_with_cpu_labels"]


@pytest.mark.gpu
def test_on_a_gpu_forward_moving_the_ids_does_not_fix_the_labels(cuda):
    """On a GPU, a forward that moves the ids accepts CPU ids, but CPU labels still fail in the loss.

    zh: 在 GPU 上，会移动 id 的 forward 能接受 CPU 上的 id，但 CPU 上的标签在损失函数里仍会报错。
    """
    model = AutoMove().to(cuda)
    token_ids, labels = torch.randint(0, 10, (4, 5)), torch.randint(0, 4, (4,))
    logits = model(token_ids)
    assert logits.device.type == "cuda"
    with pytest.raises(RuntimeError) as caught:
        nn.CrossEntropyLoss()(logits, labels)
    assert match_kind("same_device", str(caught.value)).fields["arg"] == "target"
    assert nn.CrossEntropyLoss()(logits, labels.to(cuda)).device.type == "cuda"


@pytest.mark.gpu
def test_moving_token_ids_and_labels_to_the_gpu_fixes_both(cuda):
    """With the ids and the labels moved to the model's GPU, the embedding and the loss run.

    zh: 把 id 和标签都移到模型所在的 GPU 上后，Embedding 和损失函数都能正常运行。
    """
    embedding, fc = nn.Embedding(10, 3).to(cuda), nn.Linear(3, 4).to(cuda)
    token_ids, labels = torch.randint(0, 10, (4, 5)).to(cuda), torch.randint(0, 4, (4,)).to(cuda)
    loss = nn.CrossEntropyLoss()(fc(embedding(token_ids).mean(dim=1)), labels)
    assert loss.device.type == "cuda"


@pytest.mark.gpu
def test_cpu_embedding_fed_cuda_token_ids_names_index_on_cuda(cuda):
    """An nn.Embedding left on the CPU and fed CUDA token ids raises the device check naming `index` on the GPU.

    zh: 留在 CPU 上的 nn.Embedding 收到 CUDA 上的 token id 时，抛出设备检查，点名位于 GPU 上的 `index`。
    """
    model = nn.Embedding(10, 3)
    with pytest.raises(RuntimeError) as caught:
        model(torch.randint(0, 10, (4, 5), device=cuda))
    message = str(caught.value)
    found = match_kind("same_device", message)
    assert found is not None, message
    assert found.fields["arg"] == "index" and found.fields["found"].startswith("cuda")
    if TorchVersion(torch.__version__) >= (2, 8):
        assert message == (
            "Expected all tensors to be on the same device, but got index is on cuda:0, different from other "
            "tensors on cpu (when checking argument in method wrapper_CUDA__index_select)"
        )
