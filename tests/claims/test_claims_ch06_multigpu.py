"""Claims tests for chapter 6 (several GPUs, DataParallel, DDP): each test proves one statement the chapter makes.

DataParallel does nothing without CUDA, so its own check is reached on the CPU by giving a wrapper the device
ids that its constructor sets on a CUDA machine; what needs a GPU (or two) is marked ``gpu``. DDP's own checks
run on every machine in a one-process gloo group, and one test launches a real two-process torchrun job.
"""

import inspect
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler

from devicelab import ddp
from devicelab.chapters.multigpu import RANK_DEVICE_SOLUTION, WRAP_MODEL_SOLUTION
from devicelab.errors import lookup, match_kind

DP_CHECK = ("module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on "
            "device: cpu")
CPU_DEVICE_IDS = ("DistributedDataParallel device_ids and output_device arguments only work with "
                  "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], output_device "
                  "None, and module parameters {device(type='cpu')}.")
NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."
two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 or more CUDA GPUs")


@pytest.fixture
def group():
    """A one-process gloo group, as the lab makes in the notebook."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def words(text: str) -> str:
    return " ".join(text.split())


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


# --------------------------------------------------------------------------------------------- CPU


def test_a_bare_cuda_device_has_no_number_and_differs_from_cuda_0():
    """torch.device("cuda", 1) equals "cuda:1"; a bare torch.device("cuda") has no index and is not equal to "cuda:0".

    zh: torch.device("cuda", 1) 等于 "cuda:1"；不带编号的 torch.device("cuda") 没有 index，也不等于 "cuda:0"。
    """
    assert torch.device("cuda", 1) == torch.device("cuda:1") and str(torch.device("cuda", 1)) == "cuda:1"
    assert torch.device("cuda").index is None
    assert torch.device("cuda") != torch.device("cuda:0")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without CUDA")
def test_dataparallel_without_cuda_calls_the_model_and_still_prefixes_its_state_dict():
    """Without CUDA, nn.DataParallel just calls the model; its state_dict keys still start with "module.".

    zh: 没有 CUDA 时，nn.DataParallel 只是直接调用模型；它的 state_dict 的键仍然都以 "module." 开头。
    """
    model = nn.Linear(8, 2)
    wrapped = nn.DataParallel(model)
    assert wrapped.device_ids == [] and wrapped.module is model
    x = torch.randn(4, 8)
    assert torch.equal(wrapped(x), model(x))
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]


def test_ddp_state_dict_keys_also_start_with_module(group):
    """A DistributedDataParallel wrapper's state_dict keys start with "module." too.

    zh: DistributedDataParallel 包装器的 state_dict 的键同样以 "module." 开头。
    """
    wrapped = DistributedDataParallel(nn.Linear(8, 2))
    assert list(wrapped.state_dict()) == ["module.weight", "module.bias"]
    assert list(wrapped.module.state_dict()) == ["weight", "bias"]
    assert [m.chapter for m in lookup('Missing key(s) in state_dict: "weight". Unexpected key(s) in state_dict: '
                                      '"module.weight".')] == ["07-checkpoints"]


def test_dataparallel_checks_every_parameter_against_device_ids_0_before_it_scatters():
    """DataParallel checks that every parameter is on device_ids[0] ("module must have ...") before it uses the input.

    zh: DataParallel 在使用输入之前，先检查每个参数是否都在 device_ids[0] 上（"module must have ..."）。
    """
    wrapped = nn.DataParallel(nn.Linear(8, 2))
    # What DataParallel.__init__ sets on a CUDA machine with device_ids=[0, 1]:
    wrapped.device_ids, wrapped.output_device = [0, 1], 0
    wrapped.src_device_obj = torch.device("cuda", 0)
    wrapped.scatter = None  # never reached: the check comes first
    with pytest.raises(RuntimeError) as info:
        wrapped(torch.randn(4, 8))
    assert str(info.value) == DP_CHECK
    found = match_kind("dataparallel_module_device", str(info.value))
    assert found is not None and found.fields == {"want": "cuda:0", "found": "cpu"}


def test_dataparallel_moves_the_model_itself_only_when_it_has_one_device_id():
    """DataParallel's constructor moves the model to its GPU when it has exactly one device id (read from its source).

    zh: DataParallel 的构造函数只在恰好有一个 device id 时才自己把模型移到那块 GPU 上（读自它的源码）。
    """
    source = inspect.getsource(nn.DataParallel.__init__)
    assert re.search(r"if len\(self\.device_ids\) == 1:\s*\n\s*self\.module\.to\(self\.src_device_obj\)", source)
    assert "device_ids = _get_all_device_indices()" in source  # the default: every GPU the process sees


def test_with_one_device_id_dataparallel_returns_the_modules_output_without_gathering():
    """With one device id, DataParallel.forward returns the module's own output: output_device serves two or more.

    zh: 只有一个 device id 时，DataParallel.forward 直接返回模块自己的输出：output_device 只在有两个或更多 id 时才用到。
    """
    source = inspect.getsource(nn.DataParallel.forward)
    single = source.index("if len(self.device_ids) == 1:")
    assert "return self.module(*inputs[0], **module_kwargs[0])" in source[single:single + 120]
    assert source.index("return self.gather(outputs, self.output_device)") > single  # only for two ids or more


@pytest.mark.gpu
@two_gpus
def test_gpu_with_two_gpus_one_device_id_moves_the_model_and_two_do_not(cuda):
    """With two GPUs, DataParallel(model, device_ids=[0]) moves a CPU model to cuda:0; with both ids it stays put.

    zh: 有两块 GPU 时，DataParallel(model, device_ids=[0]) 会把 CPU 上的模型移到 cuda:0；给两个编号时模型留在 CPU 上。
    """
    one = nn.Linear(8, 2)
    nn.DataParallel(one, device_ids=[0])
    assert one.weight.device == torch.device("cuda", 0)
    both = nn.Linear(8, 2)
    nn.DataParallel(both)
    assert both.weight.device.type == "cpu"


def test_ddp_without_a_process_group_raises():
    """DistributedDataParallel without a process group raises "Default process group has not been initialized ...".

    zh: 没有进程组时，DistributedDataParallel 报 "Default process group has not been initialized ..."。
    """
    assert not dist.is_initialized()
    with pytest.raises(ValueError) as info:
        DistributedDataParallel(nn.Linear(8, 2))
    assert str(info.value) == NO_GROUP
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(8))  # without num_replicas and rank, the sampler asks the group too


def test_ddp_refuses_device_ids_for_a_cpu_model_on_every_machine(group):
    """DDP(cpu_model, device_ids=[0]) raises "device_ids and output_device arguments only work with ..." anywhere.

    zh: DDP(cpu_model, device_ids=[0]) 在任何机器上都报 "device_ids and output_device arguments only work with ..."。
    """
    with pytest.raises(ValueError) as info:
        DistributedDataParallel(nn.Linear(8, 2), device_ids=[0])
    assert str(info.value) == CPU_DEVICE_IDS
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single element"):
        DistributedDataParallel(nn.Linear(8, 2), device_ids=[0, 1])


def test_ddp_of_a_cpu_model_without_device_ids_runs_where_the_model_is(group):
    """DistributedDataParallel of a CPU model, without device_ids, runs on the CPU and keeps device_ids None.

    zh: 不传 device_ids 时，CPU 模型的 DistributedDataParallel 在 CPU 上运行，device_ids 为 None。
    """
    wrapped = DistributedDataParallel(nn.Linear(8, 2))
    assert wrapped.device_ids is None and wrapped.device == torch.device("cpu")
    assert wrapped(torch.randn(4, 8)).device == torch.device("cpu")


def test_ddp_rejects_a_model_split_across_device_types(group):
    """DDP refuses a model whose parameters are on two device types ("must be on the same type of devices").

    zh: 参数分布在两种设备类型上的模型会被 DDP 拒绝（"must be on the same type of devices"）。
    """
    model = nn.Sequential(nn.Linear(8, 2), nn.Linear(2, 2, device="meta"))
    pattern = (r"DistributedDataParallel's input module must be on the same type of devices, but input module "
               r"parameters locate in \{'(cpu|meta)', '(cpu|meta)'\}")  # a set: its order varies
    with pytest.raises(ValueError, match=pattern):
        DistributedDataParallel(model)


def test_the_documentation_of_the_installed_torch_recommends_ddp_over_dataparallel():
    """The installed torch's DataParallel docstring recommends DistributedDataParallel, even on a single node.

    zh: 当前安装的 torch 中，DataParallel 的文档字符串建议改用 DistributedDataParallel，即使只有一台机器。
    """
    assert ("It is recommended to use :class:`~torch.nn.parallel.DistributedDataParallel`, instead of this class, "
            "to do multi-GPU training, even if there is only a single node.") in words(nn.DataParallel.__doc__)
    ddp_doc = words(DistributedDataParallel.__doc__)
    assert ("``DistributedDataParallel`` is proven to be significantly faster than :class:`torch.nn.DataParallel` "
            "for single-node multi-GPU data parallel training.") in ddp_doc
    assert "2) For multi-device modules and CPU modules, ``device_ids`` must be ``None``." in ddp_doc


def test_a_distributed_sampler_gives_each_rank_its_own_share_and_set_epoch_reshuffles():
    """DistributedSampler gives each rank a disjoint share of the data; set_epoch changes the shuffle.

    zh: DistributedSampler 给每个 rank 分一份互不重叠的数据；set_epoch 会改变打乱的顺序。
    """
    shares = [list(DistributedSampler(range(512), num_replicas=2, rank=r, shuffle=True, seed=0)) for r in (0, 1)]
    assert len(shares[0]) == len(shares[1]) == 256
    assert sorted(shares[0] + shares[1]) == list(range(512))
    sampler = DistributedSampler(range(512), num_replicas=2, rank=0, shuffle=True, seed=0)
    sampler.set_epoch(1)
    assert list(sampler) != shares[0]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without CUDA")
def test_torchrun_nproc_per_node_gpu_needs_cuda():
    """torchrun's --nproc_per_node=gpu refuses to start without CUDA ("Cuda is not available.").

    zh: 没有 CUDA 时，torchrun 的 --nproc_per_node=gpu 拒绝启动（"Cuda is not available."）。
    """
    from torch.distributed.run import determine_local_world_size

    with pytest.raises(ValueError, match="Cuda is not available."):
        determine_local_world_size("gpu")
    assert determine_local_world_size("2") == 2


def test_a_two_process_ddp_job_on_the_cpu_keeps_the_ranks_weights_identical():
    """Two gloo ranks under torchrun each train on half the data; their losses differ, their weights stay identical.

    zh: torchrun 下的两个 gloo rank 各用一半数据训练；它们的损失不同，权重却始终相同。
    """
    answers = ddp.write_module(*_solutions())
    try:
        run = ddp.launch(nproc=2, args=["--epochs", "2", "--answers", answers], timeout=120, echo=False,
                         env={"CUDA_VISIBLE_DEVICES": ""})  # CPU ranks with gloo, also on a CUDA machine
    finally:
        answers.unlink()
    assert run.ok, run.output[-2000:]
    assert all(r["samples"] == "256" and r["device"] == "cpu" for rank in (0, 1) for r in run.records(rank)
               if "epoch" in r)
    assert run.series("loss", 0) != run.series("loss", 1)
    assert all(lines[-1].endswith("same_weights_on_every_rank True") for lines in run.ranks.values())


def _solutions():
    """The course's rank_device and wrap_model as functions whose source can be read."""
    import importlib.util
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as handle:
        handle.write(ddp.HEADER + RANK_DEVICE_SOLUTION + "\n\n" + WRAP_MODEL_SOLUTION + "\n")
    spec = importlib.util.spec_from_file_location("ch06_solutions", handle.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rank_device, module.wrap_model


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_gpu_a_bare_cuda_means_the_current_gpu_and_tensors_always_have_a_number(cuda):
    """A tensor made with device="cuda" lands on the current GPU (cuda:0 by default) and its device has a number.

    zh: 用 device="cuda" 创建的张量落在当前 GPU 上（默认是 cuda:0），它的设备带有编号。
    """
    torch.cuda.set_device(0)
    t = torch.zeros(1, device="cuda")
    assert t.device == torch.device("cuda", 0) and t.device.index == 0
    assert torch.zeros(1).cuda().device == torch.device("cuda", 0)


@pytest.mark.gpu
@two_gpus
def test_gpu_set_device_changes_what_a_bare_cuda_means(cuda):
    """After torch.cuda.set_device(1), "cuda" and .cuda() mean cuda:1.

    zh: 调用 torch.cuda.set_device(1) 之后，"cuda" 和 .cuda() 指的是 cuda:1。
    """
    previous = torch.cuda.current_device()
    torch.cuda.set_device(1)
    try:
        assert torch.zeros(1, device="cuda").device == torch.device("cuda", 1)
        assert torch.zeros(1).cuda().device == torch.device("cuda", 1)
    finally:
        torch.cuda.set_device(previous)


@pytest.mark.gpu
@two_gpus
def test_gpu_two_gpus_fail_the_same_device_check_with_their_numbers(cuda):
    """A layer on cuda:0 fed a batch on cuda:1 prints "got mat1 is on cuda:1, different from other tensors on cuda:0".

    zh: 在 cuda:0 上的层收到 cuda:1 上的批次时打印 "got mat1 is on cuda:1, different from other tensors on cuda:0"。
    """
    layer = nn.Linear(8, 2).to("cuda:0")
    with pytest.raises(RuntimeError) as info:
        layer(torch.randn(4, 8, device="cuda:1"))
    message = str(info.value)
    if torch.torch_version.TorchVersion(torch.__version__) >= (2, 8):
        assert ("Expected all tensors to be on the same device, but got mat1 is on cuda:1, different from other "
                "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)") == message
    assert match_kind("same_device", message) is not None


@pytest.mark.gpu
def test_gpu_a_gpu_number_the_process_cannot_see_is_an_invalid_device_ordinal(cuda):
    """Asking for cuda:N when the process sees N GPUs fails with "invalid device ordinal".

    zh: 进程只能看到 N 块 GPU 时，请求 cuda:N 会报 "invalid device ordinal"。
    """
    missing = torch.cuda.device_count()
    with pytest.raises(Exception, match="invalid device ordinal"):
        torch.cuda.set_device(missing)
        torch.zeros(1, device=f"cuda:{missing}")


@pytest.mark.gpu
def test_gpu_cuda_visible_devices_decides_which_gpus_a_process_sees(cuda):
    """CUDA_VISIBLE_DEVICES set before CUDA starts decides what a process sees: "" hides every GPU, "0" shows one.

    zh: 在 CUDA 初始化之前设置的 CUDA_VISIBLE_DEVICES 决定进程能看到哪些 GPU："" 隐藏所有 GPU，"0" 只显示一块。
    """
    code = "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"
    assert run_python(code, CUDA_VISIBLE_DEVICES="").stdout.split() == ["False", "0"]
    assert run_python(code, CUDA_VISIBLE_DEVICES="0").stdout.split() == ["True", "1"]


@pytest.mark.gpu
@two_gpus
def test_gpu_cuda_visible_devices_renumbers_from_zero(cuda):
    """With CUDA_VISIBLE_DEVICES=1 the machine's second GPU is cuda:0 in the process, and cuda:1 does not exist there.

    zh: 设置 CUDA_VISIBLE_DEVICES=1 时，机器上的第二块 GPU 在该进程里是 cuda:0，而 cuda:1 在那里不存在。
    """
    second = str(torch.cuda.get_device_properties(1).uuid)
    out = run_python("import torch; print(torch.cuda.device_count()); print(torch.cuda.get_device_properties(0).uuid)",
                     CUDA_VISIBLE_DEVICES="1").stdout.split()
    assert out == ["1", second]


@pytest.mark.gpu
def test_gpu_dataparallel_scatters_a_cpu_batch_and_checks_the_model_first(cuda):
    """On one GPU, DataParallel takes a CPU batch (output on cuda:0); a model moved back to the CPU fails its check.

    zh: 在一块 GPU 上，DataParallel 接受 CPU 上的批次（输出在 cuda:0 上）；被移回 CPU 的模型过不了它的检查。
    """
    model = nn.Linear(8, 2)
    wrapped = nn.DataParallel(model, device_ids=[0])
    assert wrapped(torch.randn(4, 8)).device == torch.device("cuda", 0)
    model.cpu()
    with pytest.raises(RuntimeError) as info:
        wrapped(torch.randn(4, 8))
    assert str(info.value) == DP_CHECK


@pytest.mark.gpu
@two_gpus
def test_gpu_dataparallel_gathers_the_outputs_on_output_device(cuda):
    """With two GPUs, DataParallel gathers the outputs on output_device (device_ids[0] unless given).

    zh: 有两块 GPU 时，DataParallel 把输出汇总到 output_device 上（默认是 device_ids[0]）。
    """
    model = nn.Linear(8, 2).to("cuda:0")
    assert nn.DataParallel(model, device_ids=[0, 1])(torch.randn(4, 8)).device == torch.device("cuda", 0)
    assert nn.DataParallel(model, device_ids=[0, 1], output_device=1)(torch.randn(4, 8)).device == \
        torch.device("cuda", 1)
    on_second = nn.DataParallel(nn.Linear(8, 2).to("cuda:1"), device_ids=[0, 1])
    with pytest.raises(RuntimeError, match=re.escape("on device cuda:0 (device_ids[0]) but found one of them on "
                                                     "device: cuda:1")):
        on_second(torch.randn(4, 8))


@pytest.mark.gpu
def test_gpu_ddp_with_device_ids_moves_a_cpu_batch_to_its_gpu(cuda):
    """DDP with device_ids=[0] moves a CPU batch to cuda:0 before calling the model.

    zh: 传了 device_ids=[0] 的 DDP 会在调用模型之前把 CPU 上的批次移到 cuda:0。
    """
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        wrapped = DistributedDataParallel(nn.Linear(8, 2).to("cuda:0"), device_ids=[0])
        assert wrapped(torch.randn(4, 8)).device == torch.device("cuda", 0)
    finally:
        dist.destroy_process_group()


FORGOT_SET_DEVICE = '''\
def rank_device(local_rank):
    return torch.device("cuda")  # set_device forgotten: every rank on cuda:0


def wrap_model(model, device):
    return DistributedDataParallel(model.to(device))
'''


@pytest.mark.gpu
def test_gpu_ranks_that_all_use_cuda_0_fail_with_nccl(cuda, tmp_path):
    """Two nccl ranks that both use cuda:0 (set_device forgotten) fail: NCCL reports "Duplicate GPU detected".

    zh: 两个 nccl rank 都用 cuda:0（忘了 set_device）时作业失败：NCCL 报 "Duplicate GPU detected"。
    """
    answers = tmp_path / "answers.py"
    answers.write_text(ddp.HEADER + FORGOT_SET_DEVICE, encoding="utf-8")
    run = ddp.launch(nproc=2, args=["--epochs", "1", "--answers", answers], timeout=180, echo=False)
    assert not run.ok
    assert "Duplicate GPU detected" in run.output, run.output[-3000:]


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() != 1, reason="needs a machine with exactly one GPU")
def test_gpu_two_ranks_on_one_gpu_give_rank_1_an_invalid_device_ordinal(cuda):
    """With one GPU and --nproc_per_node=2, rank 1's set_device(1) fails with "invalid device ordinal".

    zh: 只有一块 GPU 却用 --nproc_per_node=2 时，rank 1 的 set_device(1) 报 "invalid device ordinal"。
    """
    run = ddp.launch(nproc=2, args=["--epochs", "1"], timeout=180, echo=False)
    assert not run.ok
    assert "invalid device ordinal" in run.output, run.output[-3000:]


@pytest.mark.gpu
def test_gpu_torchrun_nproc_per_node_gpu_is_one_process_per_visible_gpu(cuda):
    """torchrun's --nproc_per_node=gpu starts one process per GPU the machine shows.

    zh: torchrun 的 --nproc_per_node=gpu 为机器上可见的每块 GPU 启动一个进程。
    """
    from torch.distributed.run import determine_local_world_size

    assert determine_local_world_size("gpu") == torch.cuda.device_count()
