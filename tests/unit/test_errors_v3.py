"""The error reader reads the whole traceback, old and odd wordings, and never shows a blank slot or a guess as sure.

Each old or odd wording below was pasted in a public thread; each frame rule is one line of a real traceback
style (Python's, IPython 8's, IPython 7's).
"""

import pytest

from devicelab.errors import diagnose, evidence, frames
from devicelab.explain import chapter_url, render

SITE = "devicelab-course"


@pytest.mark.parametrize(("message", "chapter"), [
    ("RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Float", "01-devices"),
    ("RuntimeError: Expected tensor to have CUDA Backend, but got tensor with CPU Backend (while checking arguments "
     "for CPU_tensor_apply2)", "01-devices"),
    ('RuntimeError: !t.is_cuda() INTERNAL ASSERT FAILED at "../aten/src/ATen/native/sparse/SparseTensorMath.cpp":1143, '
     "please report a bug to PyTorch.", "01-devices"),
    ("ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)", "01-devices"),
    ("ValueError: Cannot find backend for cpu", "01-devices"),
    ("RuntimeError: device of crow_indices (=cpu) must match device of values (=cuda:0)", "01-devices"),
    ("RuntimeError: cannot pin 'CUDAFloatType' only dense CPU tensors can be pinned", "04-batches"),
    ("RuntimeError: Only dense CPU tensors can be pinned", "04-batches"),
    ('  File "model.py", line 23, in __init__\n    self.model = torch.jit.load(model_path)\n'
     "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the 'CUDA' backend. This could be "
     "because the operator doesn't exist for this backend", "07-checkpoints"),
    ('  File "export.py", line 156, in tofile\n    cur = weights[key].numpy().astype(np.float16)\n'
     "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
     "memory first.", "09-debugging"),
    ("RuntimeError: device of indices (-1) must match device of values (0)", "01-devices"),
    ("RuntimeError: device of indices (0) must match device of values (5)", "06-multigpu"),
    ("AttributeError: 'list' object has no attribute 'to'", "04-batches"),
    ("AttributeError: 'dict' object has no attribute 'cuda'", "04-batches"),
])
def test_old_and_odd_wordings_are_device_errors_with_their_chapter(message, chapter):
    d = diagnose(message)
    assert d.device_error and d.chapter == chapter, d


def test_an_autocast_given_a_device_with_an_index_is_declined_towards_chapter_08():
    d = diagnose("RuntimeError: unsupported autocast device_type 'cuda:0'")
    assert not d.device_error and d.chapter == "08-amp"
    assert "device.type" in render("RuntimeError: unsupported autocast device_type 'cuda:0'", "en")


def test_a_label_dtype_error_is_declined_without_a_chapter_unless_half_precision_is_in_the_traceback():
    plain = diagnose("RuntimeError: Expected object of scalar type Long but got scalar type Float for argument #2 "
                     "'target' in call to _thnn_nll_loss_forward")
    assert not plain.device_error and plain.chapter is None
    with_amp = diagnose('  File "train.py", line 30, in <module>\n    with torch.autocast("cuda"):\n'
                        "RuntimeError: Expected object of scalar type Long but got scalar type Float")
    assert not with_amp.device_error and with_amp.chapter == "08-amp"


def test_invalid_device_ordinal_inside_torch_load_is_chapter_07_with_the_remapping():
    text = (
        "Traceback (most recent call last):\n"
        '  File "eval.py", line 12, in <module>\n'
        "    state = torch.load(\"ckpt.pt\")\n"
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1014, in load\n'
        "    return _load(opened_zipfile,\n"
        '  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1422, in _load\n'
        "    result = unpickler.load()\n"
        "RuntimeError: CUDA error: invalid device ordinal"
    )
    d = diagnose(text)
    assert d.chapter == "07-checkpoints" and "map_location_remap" in d.causes
    assert "{'cuda:1': 'cuda:0'}" in render(text, "en")
    assert diagnose("RuntimeError: CUDA error: invalid device ordinal").chapter == "06-multigpu"


OPTIMIZER_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 120, in <module>\n'
    "    optimizer.step()\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/optim/optimizer.py", line 373, in wrapper\n'
    "    out = func(*args, **kwargs)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/optim/sgd.py", line 84, in step\n'
    "    sgd(params_with_grad,\n"
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!"
)


def test_a_frame_inside_the_optimizers_step_outranks_the_message_and_is_named():
    d = diagnose(OPTIMIZER_TRACEBACK)
    assert d.device_error and d.chapter == "07-checkpoints" and not d.confident
    assert d.ranking[0].where == "optim/sgd.py, line 84, in step"
    assert "01-devices" in d.candidates
    text = render(OPTIMIZER_TRACEBACK, "en")
    assert "In your traceback: optim/sgd.py, line 84, in step" in text


@pytest.mark.parametrize(("frame", "chapter"), [
    ('  File "/x/site-packages/torch/nn/parallel/data_parallel.py", line 171, in forward\n    outputs = ...',
     "06-multigpu"),
    ('  File "/x/site-packages/torch/nn/parallel/distributed.py", line 1593, in forward\n    ...', "06-multigpu"),
    ('  File "/x/site-packages/torch/distributed/distributed_c10d.py", line 2056, in all_reduce\n    work = ...',
     "06-multigpu"),
    ('  File "/x/site-packages/torch/amp/grad_scaler.py", line 451, in step\n    ...', "08-amp"),
    ('  File "/x/site-packages/torch/utils/data/_utils/pin_memory.py", line 58, in pin_memory\n    ...', "04-batches"),
    ('  File "/x/site-packages/torch/nn/modules/rnn.py", line 1123, in forward\n    result = ...', "05-inside"),
    ('  File "C:\\\\Users\\\\me\\\\lib\\\\site-packages\\\\torch\\\\optim\\\\adam.py", line 311, in adam\n    ...',
     "07-checkpoints"),
])
def test_library_frames_point_to_their_chapter(frame, chapter):
    text = f"Traceback (most recent call last):\n{frame}\nRuntimeError: Expected all tensors to be on the same device"
    assert diagnose(text).chapter == chapter


def test_a_factory_call_without_device_on_the_failing_line_of_forward_points_to_chapter_05():
    text = (
        "---------------------------------------------------------------------------\n"
        "RuntimeError                              Traceback (most recent call last)\n"
        "Cell In[7], line 3\n"
        "----> 3 out = model(x)\n\n"
        "File /usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py:1511, in Module._wrapped_call_impl"
        "(self, *args, **kwargs)\n"
        "-> 1511     return self._call_impl(*args, **kwargs)\n\n"
        "Cell In[5], line 9, in Net.forward(self, x)\n"
        "      8 def forward(self, x):\n"
        "----> 9     return self.fc(x) + torch.arange(x.shape[1])\n\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    )
    d = diagnose(text)
    assert d.chapter == "05-inside" and d.ranking[0].reason == "factory_in_forward"
    same_with_device = text.replace("torch.arange(x.shape[1])", "torch.arange(x.shape[1], device=x.device)")
    assert diagnose(same_with_device).ranking[0].reason != "factory_in_forward"


def test_an_error_raised_on_a_line_of_ones_own_helper_points_inside_and_a_layer_call_does_not():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 265, in train\n'
        "    loss, items = compute_loss(pred, targets, model)\n"
        '  File "utils/loss.py", line 517, in build_targets\n'
        "    gwh = t[:, 4:6] * grid\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    )
    d = diagnose(text)
    assert d.chapter == "05-inside" and not d.confident and "01-devices" in d.candidates
    top_level = text.replace("in build_targets", "in train_one_epoch")
    assert diagnose(top_level).chapter == "01-devices"
    installed = text.replace('"utils/loss.py"', '"/usr/lib/python3.10/site-packages/thop/hooks.py"')
    assert diagnose(installed).chapter == "01-devices"


def test_a_dispatchers_frame_or_a_whole_pipelines_call_is_not_where_the_tensor_was_made():
    """An application that runs nodes prints the message first and its traceback after it, often cut at its own
    dispatcher ("execute"); a line that calls a whole pipeline raised inside it. Neither is the reader's line that made
    a tensor: the message's own chapter answers (a meta tensor: chapter 07)."""
    dispatcher = (
        "!!! Exception during processing !!! Cannot copy out of meta tensor; no data!\n"
        "Traceback (most recent call last):\n"
        '  File "/home/me/app/execution.py", line 327, in execute\n'
        "    outputs = run_node(node, inputs)\n"
    )
    assert diagnose(dispatcher).chapter == "07-checkpoints"
    assert diagnose(dispatcher.replace("in execute", "in build_mask")).chapter == "05-inside"  # a helper's own line
    pipeline = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/nodes/sampler.py", line 1000, in generate\n'
        "    images = pipe(prompt, num_inference_steps=28)\n"
        "RuntimeError: Tensor on device cpu is not on the expected device meta!"
    )
    assert diagnose(pipeline).chapter == "07-checkpoints"
    assert diagnose(pipeline.replace("pipe(prompt", "blend(prompt")).chapter == "05-inside"


def test_old_ipython_tracebacks_are_read_too():
    text = (
        "<ipython-input-5-2f1c> in <module>()\n"
        "----> 1 loss.backward(); optimizer.step()\n\n"
        "/usr/local/lib/python3.7/dist-packages/torch/optim/adam.py in step(self, closure)\n"
        "    107                 denom = ...\n"
        "--> 108                 exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)\n\n"
        "RuntimeError: expected device cpu but got device cuda:0"
    )
    [_, adam] = frames(text)
    assert adam.torch_path == "torch/optim/adam.py" and adam.line == "108"
    assert evidence(frames(text))[0].chapter == "07-checkpoints"


def test_an_error_in_the_middle_of_a_long_log_is_found_and_the_cut_is_said():
    noise = "".join(f"epoch {i}: loss 0.{i % 97:02d} lr 0.001 it/s 12.5\n" for i in range(8000))
    text = noise + "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different " \
        "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)\n" + noise
    assert len(text) > 200_000
    d = diagnose(text)
    assert d.device_error and d.chapter == "03-embedding" and d.cut > 0
    assert "KB" in render(text, "en") and "KB" in render(text, "zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_links_are_full_addresses(lang):
    text = render(OPTIMIZER_TRACEBACK, lang)
    assert chapter_url("07-checkpoints", lang) in text and chapter_url("07-checkpoints", lang).startswith("https://")


def test_a_decline_does_not_ask_for_the_error_line_the_reader_already_pasted():
    pasted = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'model'"
    text = render(pasted, "en")
    assert "Paste the whole last line" not in text and "Not recognised" in text
    assert "Paste the whole last line" in render("my training is slow on the gpu", "en")


@pytest.mark.parametrize(("message", "chapter"), [
    ("RuntimeError: input must be a CUDA tensor", "01-devices"),
    ("RuntimeError: Expected x.is_cuda() to be true, but got false.", "01-devices"),
    ("RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor", "04-batches"),
    ("RuntimeError: Function AddmmBackward returned an invalid gradient at index 1 - expected device cpu but got "
     "cuda:0", "05-inside"),
    ('RuntimeError: Attempted to set the storage of a tensor on device "cpu" to a storage on different device '
     '"cuda:0".  This is no longer allowed; the devices must match.', "07-checkpoints"),
    ("RuntimeError: Input tensor is not an XLA tensor: CPUFloatType", "01-devices"),
    ("TypeError: expected CPU (got CUDA)", "01-devices"),
    ("RuntimeError: Tensor.item() cannot be called on meta tensors", "07-checkpoints"),
    # torch.cuda's functions given the device of a tensor that is on the CPU (torch.cuda.device(x.device))
    ("ValueError: Expected a cuda device, but got: cpu", "01-devices"),
])
def test_hand_written_and_backend_checks_are_device_errors(message, chapter):
    d = diagnose(message)
    assert d.device_error and d.chapter == chapter and not d.confident, d


@pytest.mark.parametrize(("message", "chapter"), [
    ("RuntimeError: Expected one of cpu, cuda, mps, meta device type at start of device string: gpu", "01-devices"),
    ("RuntimeError: Not compiled with GPU support", None),
])
def test_device_strings_and_extensions_built_without_cuda_are_declined(message, chapter):
    d = diagnose(message)
    assert not d.device_error and d.chapter == chapter


@pytest.mark.parametrize("message", [
    "ValueError: Tensors are on different devices: cuda:0 and cpu",
    "RuntimeError: Device mismatch: weight on cpu, input on cuda:0",
    "AssertionError: x is not on the same device as y",
    "报错：张量不在同一个设备上 cuda:0 cpu",
])
def test_libraries_own_device_checks_are_read_as_device_errors_without_certainty(message):
    d = diagnose(message)
    assert d.device_error and d.chapter == "01-devices" and not d.confident


# Wordings of the general reading (none of them a family's): a comparison between two places, the wanted place
# named first, one place said to be required of a tensor, a device check as C++ or Python prints it, Chinese.
@pytest.mark.parametrize("message", [
    "RuntimeError: mat1 is on cpu, different from other tensors on cuda:0",
    "ValueError: The model's device (cpu) does not match the input's device (cuda:0)",
    "RuntimeError: CUDA tensor expected but got CPU tensor",
    "RuntimeError: Expected cuda tensor",
    "RuntimeError: Expected all tensors on cuda",
    "RuntimeError: This function requires CUDA tensors",
    "RuntimeError: The tensor is on the wrong device",
    "ValueError: You can't train a model that has been loaded in 8-bit precision on a different device than the one "
    "you're training on.",
    "RuntimeError: Expected object of type Variable[CUDAFloatType] but found type Variable[CPUFloatType] for "
    "argument #1 'mat1'",
    "RuntimeError: Expected is_cuda to be true, but got false.",
    "RuntimeError: Expected input.device() == weight.device() to be true, but got false.",
    "RuntimeError: Expected x.device().type() == at::kCUDA to be true, but got false.",
    "RuntimeError: Check failed: input.device().is_cuda()",
    '  File "ops.py", line 12, in roi_pool\n    assert input.is_cuda\nAssertionError',
    "ValueError: weight is on the meta device, we need a `value` to put in on 0.",
    "RuntimeError: 张量不在 GPU 上",
    "RuntimeError: 输入张量必须在 CUDA 上",
    "RuntimeError: 数据和模型不在一个设备上",
    "RuntimeError: iter.device(arg).is_cuda() INTERNAL ASSERT FAILED at Loops.cuh:94, please report a bug to PyTorch.",
    "ValueError: At least two input variables have different memory locations (Cpu/Gpu)",
    # device checks written in PyTorch's and libraries' sources: torch.device's repr, one place required with
    # "must be", an optimizer's supported devices, a CUDA-only operator handed CPU tensors
    "RuntimeError: FSDP only supports single device modules but got params on {device(type='cuda', index=0), "
    "device(type='cpu')}",
    "RuntimeError: boxes must be a CPU tensor",
    "RuntimeError: `fused=True` requires all the params to be floating point Tensors of supported devices: ['cuda'].",
    "AssertionError: If capturable=True, params and state_steps must be on supported devices: ['cuda', 'xla', "
    "'privateuseone'].",
    "RuntimeError: carafe_forward_impl: implementation for device cpu not found.",
])
def test_a_message_that_places_a_tensor_in_any_wording_is_a_device_error_never_declined(message):
    d = diagnose(message)
    assert d.device_error and d.chapter and not d.confident and "09-debugging" in d.candidates, d


# Messages that name a device without any placement mix-up: declined, each pointed to the chapter that covers it.
@pytest.mark.parametrize(("message", "chapter"), [
    ("NotImplementedError: The operator 'aten::_linalg_solve_ex.result' is not currently implemented for the MPS "
     "device. As a temporary fix, you can set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the "
     "CPU as a fallback for this op.", "01-devices"),
    ("UserWarning: The operator 'aten::nonzero' is not currently supported on the MPS backend and will fall back to "
     "run on the CPU.", "01-devices"),
    ("ValueError: fp16 mixed precision requires a GPU (not 'mps').", "08-amp"),
    ("RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.", "07-checkpoints"),
    ("ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as it is, "
     "since the model has already been set to the correct devices and casted to the correct `dtype`.",
     "07-checkpoints"),
    ("ValueError: It seems like you have activated sequential model offloading by calling "
     "`enable_sequential_cpu_offload`, but are now attempting to move the pipeline to GPU. This is not compatible "
     "with offloading.", "07-checkpoints"),
    # an extension built without its CUDA operators: no placement mix-up (the CPU form above is one)
    ("RuntimeError: nms_impl: implementation for device cuda:0 not found.", None),
    ("ImportError: FlashAttention requires a GPU", None),
    ("AssertionError: CUDA is required for this model", None),
    ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
     "[torch.cuda.FloatTensor [64]], which is output 0 of ReluBackward0, is at version 2; expected version 1 instead.",
     None),
])
def test_a_message_that_names_a_device_without_a_mix_up_is_declined_with_its_chapter(message, chapter):
    d = diagnose(message)
    assert not d.device_error and d.chapter == chapter, d


def test_a_search_index_on_a_device_is_not_read_as_an_embeddings_indices():
    d = diagnose("AssertionError: GPU tensor on CPU index not allowed")
    assert d.device_error and d.chapter == "01-devices" and "03-embedding" not in d.candidates


def test_a_graph_librarys_device_context_points_to_batches():
    d = diagnose("Check failed: csr.indptr->ctx.device_type == source->ctx.device_type (2 vs. 1) : Graph and source "
                 "should in the same device context")
    assert d.device_error and d.chapter == "04-batches"


def test_a_gpu_beside_the_cpu_in_a_multi_gpu_program_is_a_tensor_left_behind_not_two_gpus():
    d = diagnose("RuntimeError: FSDP only supports single device modules but got params on "
                 "{device(type='cuda', index=0), device(type='cpu')}")
    assert d.chapter == "06-multigpu" and d.devices == ("cuda:0", "cpu")
    assert "multi_gpu_mix" not in d.causes and "model_not_moved" in d.causes
    assert "cuda:0 and cpu" in d.match.reading("en") and "device(type=" not in d.match.reading("en")
    two = diagnose("RuntimeError: FSDP only supports single device modules but got params on "
                   "{device(type='cuda', index=0), device(type='cuda', index=1)}")
    assert two.causes[0] == "multi_gpu_mix" and two.devices == ("cuda:0", "cuda:1")
