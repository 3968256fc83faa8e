"""The general reading of device words (issue: read any message that names two places), widened from two sources
that are not held out: the device checks PyTorch and libraries built on it raise, as their source code words them
(tests/errors/source_wordings.json), and the development halves of the ninth to thirteenth batches of real pastes, where
posters often tell the error in their own words. The posters' cases below are paraphrases written for these tests, not
the corpus's texts; the paste page reads all of them, the mined wordings and those development pastes the same way
(tests/site/test_explain_page.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devicelab.errors import diagnose

SOURCES = Path(__file__).resolve().parents[1] / "errors" / "source_wordings.json"
# The development halves the general reading was written from: the ninth batch's (novel_dev9.json) and every later one.
DEVELOPMENT_HALVES = sorted((p for p in SOURCES.parent.glob("novel_dev*.json")
                             if int(p.stem.removeprefix("novel_dev") or 1) >= 9),
                            key=lambda p: int(p.stem.removeprefix("novel_dev")))

# Wordings from the sources (rendered as printed, with plausible values in their slots) that the reading missed
# before: each names two places, or one place a tensor must be on or is wrongly on, in its own words.
FROM_THE_SOURCES = [
    "RuntimeError: reduce_op: out, out2, and the input must share a device, got out=cpu, out2=cuda:0, a=cuda:0",
    "RuntimeError: backend of indices (CUDA) must match backend of values (CPU)",
    "RuntimeError: crow_indices and col_indices devices (0, -1) must match",
    "RuntimeError: Error original_tensor.device= cpu is not supported! Only CUDA tensors are currently supported.",
    "BufferError: Can't export tensors on a different CUDA device index. Expected: 1. Current device: 0.",
    "AssertionError: reduce_add expects all inputs to be on GPUs, but input 1 is on CPU",
    "RuntimeError: To support a module with both CPU and GPU params, please pass in device_id argument.",
    "AssertionError: Does not support mixing cuda+mps",
    "ValueError: When `right_inverse` outputs one tensor, it may not change the device. original.device: cuda:0 "
    "right_inverse(original).device: cpu",
    "RuntimeError: Expected out.device == cuda:0, got cpu",
    "AssertionError: seq_lens is on cpu, block_table on cuda:0",
    "AssertionError: cu_seqlens_q device cpu != expected cuda:0",
    "RuntimeError: Expected all input tensors to be NPU tensors, but tensor at index 1 has device 'cpu'",
    "RuntimeError: input must be a NPU tensor",
    "RuntimeError: Check failed: base.device().is_xla(): base tensor on unexpected device: cpu",
    "RuntimeError: Check failed: bridge::TryGetXlaTensor(tensor): The input is not an XLA tensor.",
    "UserWarning: Found tensor with shape torch.Size([8, 128]) on cpu. Please move all tensors to xla device to "
    "execute on XLA device.",
    "ValueError: Input list must contain tensors on CPU.",
    "ValueError: The index tensor and the source tensor must be of type CUDA!",
    "NotImplementedError: SpanningTree does not support cuda tensors",
    "RuntimeError: FusedAdam does not support use_mt with tensors on multiple device",
    "RuntimeError: The model is mixed with different device type",
    "RuntimeError: CUDA segment tree values must live on CUDA",
    "RuntimeError: invalid argument 1: Vertex positions must be stored on device CUDA, index 0! Are stored on CPU, "
    "index -1.",
    "AssertionError: Only support CUDA tensors",
    "RuntimeError: Not implemented on the CPU",
    "RuntimeError: Trying to pass too many CPU scalars to CUDA kernel!",
    "RuntimeError: legacy constructor expects device type: cpubut device type: cuda was passed",
]


@pytest.mark.parametrize("text, chapter", [
    # a checkpoint of another backend loaded where that backend is missing: the CUDA message's advice, another device
    ("RuntimeError: The NPU device module is not registered. If you are running on a CPU-only machine, please use "
     "torch.load with map_location=torch.device('cpu') to map your storages to the CPU.", "07-checkpoints"),
    # weights loaded into a model built on meta: nothing is copied
    ("UserWarning: for fc.weight: copying from a non-meta parameter in the checkpoint to a meta parameter in the "
     "current model, which is a no-op. (Did you mean to pass `assign=True`?)", "07-checkpoints"),
    ("RuntimeError: Expected a NPU Generator", "04-batches"),
    ('dgl._ffi.base.DGLError: Expect argument "feat" to have device cuda:0. But got cpu.', "04-batches"),
    # an optimizer's state named in words (not by its fields, exp_avg and the like): chapter 07's resumed state
    ("UserWarning: the optimizer's state is on cpu while the parameters are on cuda:0", "07-checkpoints"),
    # two things each on its device, the clauses cut by a semicolon; buffers are chapter 05's
    ("RuntimeError: running buffers are on cpu; parameters are on cuda:0", "05-inside"),
])
def test_what_the_wording_is_about_chooses_the_chapter(text, chapter):
    d = diagnose(text)
    assert d.device_error and d.chapter == chapter, (d.kind, d.chapter)


@pytest.mark.parametrize("text, device_error, chapter", [
    ("RuntimeError: Input type (Variable[CUDAFloatType]) and weight type (Variable[CPUFloatType]) should be the same",
     True, "02-dataparallel"),
    ("RuntimeError: Input type (Variable[CPUFloatType]) and weight type (Variable[CUDAFloatType]) should be the same",
     True, "01-devices"),
    ("RuntimeError: Input type (Variable[CUDAHalfType]) and weight type (Variable[CUDAFloatType]) should be the same",
     False, "08-amp"),
])
def test_the_convolutions_check_in_pytorch_0_4s_variable_wording(text, device_error, chapter):
    """PyTorch 0.4 printed the types as Variable[CUDAFloatType]: the devices and dtypes inside are read."""
    d = diagnose(text)
    assert (d.device_error, d.chapter) == (device_error, chapter)


def test_a_pair_that_names_one_device_twice_gives_way_to_a_pair_that_names_two():
    """ "a GPU other than cuda: 0" names the GPU twice; the later "cuda:0 and cuda:4" is the real pair."""
    text = ("When I run the program on a GPU other than cuda: 0, for example on cuda: 4, it reports an error: "
            "tensors were found at cuda:0 and cuda:4.")
    d = diagnose(text)
    assert d.device_error and d.chapter == "06-multigpu" and set(d.devices) == {"cuda:0", "cuda:4"}
    # with no second pair, a pair of one device stays what it was: no device error
    assert not diagnose("RuntimeError: expected the tensor on GPU but found it on cuda").device_error


PROSE = [
    "I think the labels were never moved to the GPU, the loss fails on the first batch.",
    "It turned out I forgot to move the mask to cuda before the multiplication.",
    "The hidden state is still on the CPU after model.cuda().",
    "原因是数据没有放到GPU上",
    "模型的部分参数还在cpu上",
    "代码里cpu和gpu混用了",
    "报错说tensor在不同的device上",
    "数据和模型不在同一块GPU上",
    "需要把数据也放到cuda上",
    "两个张量设备不一样",
    "Without the fix there will be a CUDA/CPU mismatch in generate().",
    "The input ids weren't getting put on the GPU, so the model failed on the first call.",
    "The model was on the graphics card and the example batch was on cpu, so add_graph threw an error.",
    # the twelfth batch's development half
    "Some clients train on the CPU and some on the GPU, so the tensors they exchange do not match.",
    "The image is on the GPU, but the transform object has not been put in GPU mode.",
    # the fourteenth batch's development half
    "Device Mismatch Error when running the quantized model",
    "The prompt tokens are not placed on right device when the engine wraps the model.",
    "There is a mismatch between the compiled kernel's device and the input tensor's device at runtime.",
    "The bias is created on the default device rather than the device of the query tensor.",
    "Weights are in CPU format after the update; I have to call .cuda() on the models myself.",
    # the sixteenth batch's development half
    "It is easy to forget to copy `.bg` and `.mask` to CUDA devices before the call.",
    # the eighteenth batch's development half: a component that refuses what is on the GPU, a fix's own words, a
    # few tensors left on the CPU, made on the CPU while the rest is on the device, a DirectML tensor expected
    "The blur augmentation couldn't accept an input tensor on CUDA, while the colour ones can.",
    "The filter's window can not work on CUDA tensors: it is built once at construction.",
    "Move the batch to the correct device when a GPU is given on the command line",
    "The run fails because some weights still lie on CPU after sharding the encoder.",
    "The lookup table is created on cpu whereas the scores are still on device, so the gather fails.",
    "RuntimeError: the kernel expects Dml tensor as inputs",
    # a library's advice: move a thing to the device of another
    "ValueError: Please move the targets to the device of the predictions before calling update().",
    # the twentieth batch's development half: device -1 (the CPU) against a GPU's number, a legacy CUDA type name
    # that a tensor is not, a pair of devices whose issues a change avoids
    "[Error] Incompatible device of contact tensor in function getForces: expected device 0, received device -1",
    "On a GPU the `masks` tensor raises an error, since it is not a `torch.cuda.FloatTensor`.",
    "Moved the hidden tensor to cpu to avoid cpu/cuda issues when training on a GPU.",
    # the twenty-first batch's development half: a C++ assert's report on a device comparison
    'RuntimeError: [/src/graph/builder.cc:88] Assert on "input_device == "gpu"" failed: gpu ops need gpu inputs.',
    # the twenty-second batch's development half: a device type mismatch, a device said to differ from another's,
    # non-CUDA parameters, a tensor refused because it is on the GPU already
    "Fitting the surrogate on the GPU gives a device type mismatch in the acquisition step.",
    "The device of the attention mask is different from the device of the logits.",
    "The optimizer wrapper complains about non-CUDA parameters when the network was left on the CPU.",
    "The export helper fails for already-on-GPU tensors because it pins their memory first.",
    # a pair called a mismatch, as a reader types it into a search box
    "tensor cpu cuda mismatch",
    "cpu-gpu mismatch in the loss",
    # the twenty-third batch's development half: two things each on its device ("whose ... is on"), one place and
    # not another thing's device, one thing on a device and another not
    "A layer whose input is on the CPU and whose weight is on the XPU fails in the forward pass.",
    "The mask the helper builds lands on cpu, not the input's device.",
    "The cost matrix is on gpu but the returned loss is not.",
]
TWO_GPUS = [
    'With "device": "cuda:1" in the config the weights still load on device 0, and then tensors are on different '
    "devices in the forward pass.",
    "多卡训练时报错：张量不在同一个设备上",
    "It works on one card; when training the model on a different GPU the optimizer state is on different devices.",
    "为什么我用多种卡训练时，输入跟模型的参数不再同一个gpu上",  # 再 for 在, as it is often typed
    # the twelfth batch's development half: several GPUs in words, a message whose devices were cut off
    "Training works on a single GPU, but with multiple GPUs: Expected all tensors to be on the same device, but found "
    "at least two devices",
    "单卡可以训练，换成多张显卡就报错：Expected all tensors to be on the same device, but found at least two devices",
    "The evaluation fails because the kernel's tensors live on more than one GPU.",
    "After the sync under DDP the metric's states are on different devices and compute() crashes.",
    "The exported model has cuda:0 hard-coded, so it cannot run on an other device such as cuda:1.",
    # the thirteenth batch's development half: "different" misspelt, MPS's placeholder message beside a device map
    "Running inference on multiple GPU's raises a tensors on diferent devices error.",
    "The kernel works for device-0 but not for device-1 when it is given the tensor's pointer.",
    # the fourteenth batch's development half: GPUs in lower case, numbered as gpu1 or cuda(2)
    "Tensors are on different gpus when I train with the second card.",
    # the sixteenth batch's development half: a count of GPUs; a Chinese title that names the error before 错误
    "On a 4gpu node it says the tensors are on different devices.",
    "双卡推理时显卡device不一致错误，第870行",
    "Inference on a different gpu fails: with model.cuda(2) some of the work still runs on gpu 0.",
    # the twenty-second batch's development half: a count of cards by their model number
    "Serving the 13B model on two 3090s gives tensors on different devices.",
    "用4张4090推理时报错：张量不在同一个设备上",
]
# The model's own tensors or layers left behind, in words: chapter 05 (plain attributes, buffers, a Python list of
# layers, a default device, a model traced on the CPU).
INSIDE = [
    "Some of the buffers will store on CPU after the first epoch, so testing fails.",
    "These unregistered tensors stay at cpu when the model goes to the gpu.",
    "The mask tensor is by default stored on the CPU.",
    "The list of modules does not shift to the GPU when I call cuda() on the model.",
    "I traced the model on cpu; on the gpu some tensor doesn't move back to gpu.",
    # tensors a function makes for itself without a device (the twelfth batch's development half)
    "Two intermediate tensors were made without a device, so the matmul failed with tensors on different devices.",
    "Helper tensors are now created on the input's device instead of defaulting to CPU, which fixes the device "
    "mismatch.",
    # the fourteenth batch's development half: made without a device, told beside the generic check
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! The code "
    "creates its masks without having the device in mind.",
    "Expected object of backend CUDA but got backend CPU for argument #2 'other': some newly constructed tensors "
    "are built on CPU in the feature functions.",
    "Tensors on different devices: the lookup table is initialized on the default device, not the input's.",
    "The offsets were made inside a with torch.device(...) block, so they ended up on different devices.",
    "Put ones(3) on the same device as the weights to avoid tensors on different devices.",
    # the sixteenth batch's development half: made on the CPU in words, a move that does not take everything
    "Tensors are created on cpu even when cuda is given as the device.",
    "Calling .to('cuda') on the wrapper doesn't move everything to the device, because some attributes are plain "
    "tensors, not buffers.",
    # the fifteenth batch's development half: a library's own tensors left on the CPU, in a poster's words
    "With every input on cuda the rotation fails: it seems some variables in the computation are located in CPU.",
    "Inside the spline layer, some tensors being built and then reused were always getting sent to 'cpu'.",
    # the eighteenth batch's development half: a tensor made without saying where, told in words
    "A new tensor w is created without assigning it to the same device as the inputs, so the example fails on GPU.",
    "The `zeros` and `arange` tensors are not being assigned to the right device inside the helper.",
    "Tensor located on cpu in the graph's decompositions pass",
    # the nineteenth batch's development half: the fix quoted, a model's attribute moved where the model runs
    "It fails on the GPU; the fix is to add self.item_ids = self.item_ids.to(self.device) in the model.",
    # the twenty-second batch's development half: tensors left as made, or not registered, in words
    "The lookup offsets remain initialized on CPU after the layer is moved to cuda.",
    "The basis matrices are not properly registered, so they are not moved to the model's device with .to().",
    # the twenty-third batch's development half: buffers said not to be moved, layers kept in a plain dict
    "The registered buffers are silently not moved when the module goes to the GPU.",
    "model.cuda() does nothing for the dict of nn layers my network holds.",
]
# A checkpoint from a GPU, loaded where there is none, told in the poster's words: chapter 07.
LOADED_WITHOUT_THE_GPU = [
    "A checkpoint saved on the GPU server cannot be loaded on my laptop, which runs on the CPU.",
    "Loading the model trained on a GPU machine fails on a CPU-only machine.",
    "Restoring the exported learner with load_learner in an environment without XLA raises an error.",
    "模型用GPU训练，在CPU上预测时加载失败",
    # the nineteenth batch's development half: trained on a GPU, sampled on a machine without one
    "The synthesizer trained on a CUDA machine cannot sample on a cpu-only laptop.",
    # the twentieth batch's development half: the fix told in words, a checkpoint mapped to the CPU
    "Synthesis on a laptop fails: we must load the decoder checkpoint and map it to CPU when CUDA is missing.",
    # the fourteenth batch's development half, also when a pair of devices is read first
    "The network was trained on GPU servers and is unable to predict on CPU: tensors on cuda and cpu.",
]
NEGATIVES = [
    "It runs on the CPU but on the GPU it fails with RuntimeError: CUDA error: device-side assert triggered",
    "Training with CUDA 11.8 on GPU 0 and GPU 1, the loss becomes NaN after 3 epochs.",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity)",
    "Inference is very slow, the model seems to run on the CPU only.",
    "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half",
    "在CPU上可以运行，在GPU上就报错：CUDA error: device-side assert triggered",
    "It works with cuda:0 but not with the CPU build of the extension.",  # one GPU by number is no pair of GPUs
    # a sentence that ends its line is not glued to the next one: two runs compared, not two places
    "The sort returns the error below when the inputs are cuda tensors.\nIf they are on cpu, all is well.",
    "在cuda上运行会报如下错误，如果跑在cpu上则不会，但cpu上太慢",
    "The data loader cannot work on CUDA machines without the driver: RuntimeError: Found no NVIDIA driver",
    "The model sits on the GPU and trains fine, but the loss is NaN after two epochs.",
    "You can move the model to the device of your choice with the --device flag; training then diverges.",
    "I had CPU/GPU issues while installing both builds of torch side by side.",  # no change avoids or causes them
    # where a program ran, not where a tensor is (in lower case, where no exception line limits the reading)
    "it works successfully on cpu, and what can i do if i want to move the quantized conv to gpu.",
    'RuntimeError: [/src/graph/builder.cc:88] Assert on "num_threads > 0" failed: give the loader at least one thread.',
    # a traceback's code line that moves a model's attribute is no fix in words
    'Traceback (most recent call last):\n  File "train.py", line 50, in __init__\n    self.model = '
    'self.model.to(self.device)\nAttributeError: \'NoneType\' object has no attribute \'to\'',
    '  File "train.py", line 460, in cuda\n    self.net = self.network.cuda()\nRuntimeError: CUDA error: out of '
    'memory',
    # a device's name, number or memory differs: no tensor is on the wrong device
    "The device name torch reports is different from the one nvidia-smi shows.",
    "The device count is different from the number of GPUs in CUDA_VISIBLE_DEVICES.",
    # tensors already on the GPU, said without a failure
    "If your tensors are already on the GPU, the loader skips the copy and training is faster.",
    # one 3090, and a dtype mismatch
    "On one 3090 the fp16 run fails with a dtype mismatch between Half and Float.",
    # a version mismatch names CUDA and the CPU build, no tensor on a device
    "CUDA CPU version mismatch after installing the wheel",
    # a device other than one: a choice of device, no tensor in two places
    "The helper fell back to the CPU for any device other than cuda, so MPS was never used.",
    "get_device() returns the CPU for anything else than cuda on a Mac with MPS.",
    # code moved between files, not tensors between devices
    "The modules were not moved between files in this refactor, only renamed.",
    # results that differ, a program that ran on the CPU, a speed, a dtype conversion: no tensor in two places
    "On the device the results are different from the CPU run by 1e-3.",
    "There are no errors when the tensors are already on the GPU.",
    "It trains in cpu, not the GPU device I selected, and it is slow.",
    "The model is on GPU but training is not faster than before.",
    "The weights were not converted to fp16 by the model's half() call.",
    # where a program ran, after a tensor's printed device: "..., device='mps:0') but with cpu it works"
    "the output is all nan: tensor([[nan, nan]], device='mps:0', grad_fn=<linearbackward0>) but with cpu it works",
]


@pytest.mark.parametrize("text", FROM_THE_SOURCES + PROSE)
def test_a_device_check_in_a_librarys_words_or_a_posters_words_for_a_tensor_left_behind_is_read(text):
    d = diagnose(text)
    assert d.device_error, (text, d.kind)


def test_a_posters_words_before_the_error_line_are_not_read_as_the_message():
    """ "it runs on the CPU, on the GPU it fails with ..." is how negatives are told too: once a paste has an error
    line, only the error lines are read (core.error_part), so words before "报错" on its line are left out."""
    assert not diagnose("在CPU上可以运行，在GPU上就报错").device_error


@pytest.mark.parametrize("text", INSIDE)
def test_the_models_own_tensors_left_behind_in_words_point_to_chapter_05(text):
    d = diagnose(text)
    assert d.device_error and d.chapter == "05-inside", (d.kind, d.chapter)


def test_a_pair_of_one_device_gives_way_to_a_later_reading_without_a_pair():
    """ "transferred to CUDA, while ... transferred to CUDA" names CUDA twice; "not being transferred" decides."""
    d = diagnose("The weights in the model were not being transferred to CUDA, while the data in the model was "
                 "transferred to CUDA.")
    assert d.device_error


def test_a_meta_tensor_error_in_words_points_to_chapter_07():
    d = diagnose("Loading the pipeline keeps failing with a runtime error 'Meta tensor error' after the offload.")
    assert d.device_error and d.chapter == "07-checkpoints", (d.kind, d.chapter)


def test_the_generate_warning_about_input_ids_points_to_the_batch_left_behind():
    """transformers' warning names the input ids, which an embedding reads, but the fix is the batch's move."""
    d = diagnose("UserWarning: You are calling .generate() with the input_ids being on a device type different than "
                 "your model's device. input_ids is on cpu, whereas the model is on cuda.")
    assert d.device_error and d.chapter == "01-devices" and "03-embedding" in [r.chapter for r in d.ranking]


def test_mps_placeholder_storage_beside_a_device_map_stays_an_mps_reading():
    """A device map in the paste is no second GPU when the message is MPS's placeholder storage."""
    d = diagnose('model = AutoModelForCausalLM.from_pretrained(name, device_map="auto").to("mps")\n'
                 "RuntimeError: Placeholder storage has not been allocated on MPS device!")
    assert d.device_error and d.chapter == "01-devices", d.chapter


@pytest.mark.parametrize("text", LOADED_WITHOUT_THE_GPU)
def test_a_gpu_checkpoint_loaded_without_the_gpu_in_the_posters_words_points_to_chapter_07(text):
    d = diagnose(text)
    assert d.device_error and d.chapter == "07-checkpoints", (d.kind, d.chapter)


@pytest.mark.parametrize("text", TWO_GPUS)
def test_two_gpus_in_the_paste_point_to_the_multi_gpu_chapter(text):
    d = diagnose(text)
    assert d.device_error and d.chapter == "06-multigpu", (d.kind, d.chapter)


def test_a_sampler_class_of_a_library_is_no_data_loaders_sampler():
    """botorch's HitAndRunPolytopeSampler is not a DataLoader's sampler (chapter 04's generator device)."""
    d = diagnose("The bounds are moved to cpu inside the HitAndRunPolytopeSampler while the constraints stay on "
                 "cuda:0, so torch.cat fails.")
    assert d.device_error and d.chapter != "04-batches", d.chapter
    for text in ("The sampler draws its indices on cpu while the dataset tensors are on cuda:0.",
                 "With a RandomSampler the indices are made on cpu while the data is on cuda:0.",
                 "The samplers draw their indices on cpu while the dataset tensors are on cuda:0."):
        d = diagnose(text)
        assert d.device_error and d.chapter == "04-batches", d.chapter


def test_a_wavelet_scattering_transform_is_no_data_parallel_scatter():
    d = diagnose("TypeError: Input must be on CPU. The Scattering1D filters are on the CPU and my input on cuda.")
    assert d.device_error and d.chapter != "06-multigpu", d.chapter


def test_one_gpu_in_numbers_is_not_several():
    """ "1个GPU" is one GPU; "4张V100" and "两块GPU" are several."""
    cut = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices"
    assert diagnose("只有1个GPU，" + cut).chapter != "06-multigpu"
    assert diagnose("用4张V100推理，" + cut).chapter == "06-multigpu"
    assert diagnose("两块GPU一起训练，" + cut).chapter == "06-multigpu"


def test_a_cuda_version_is_no_second_gpu():
    d = diagnose("RuntimeError: tensors are on different devices (CUDA 11.8, GPU 0)")
    assert d.device_error and d.chapter != "06-multigpu"


def test_modules_a_device_map_left_on_the_cpu_or_disk_are_declined_with_chapter_07():
    d = diagnose("ValueError: Found modules on cpu/disk. Using Exllama backend requires all the modules to be on GPU.")
    assert not d.device_error and d.kind == "modules_offloaded" and d.chapter == "07-checkpoints"


@pytest.mark.parametrize("text", NEGATIVES)
def test_close_negatives_stay_negatives(text):
    assert not diagnose(text).device_error, diagnose(text).kind


def test_most_device_checks_the_sources_raise_are_read_and_few_other_device_messages_are_claimed():
    """A floor on the whole list mined from the sources (today 283/332 and 11/64): raise it as the reading improves.
    Its labels are a collector's, broader than the course's (loading with a device map, quantized models' moves)."""
    entries = json.loads(SOURCES.read_text(encoding="utf-8"))
    placement = [e for e in entries if e["placement"]]
    other = [e for e in entries if not e["placement"]]
    read = sum(diagnose(e["text"]).device_error for e in placement)
    claimed = sum(diagnose(e["text"]).device_error for e in other)
    assert len(placement) >= 300 and len({e["library"] for e in entries}) >= 30
    assert read >= 0.84 * len(placement), f"{read}/{len(placement)}"
    assert claimed <= 0.2 * len(other), f"{claimed}/{len(other)}"


def test_every_wording_and_route_compiles_in_python():
    """diagnose() never raises on a reader's paste, so a wording that does not compile would only show as every
    message declined: each one is compiled here, where the error names it."""
    import re

    from devicelab.errors import KINDS

    for kind in KINDS.values():
        for caseless in (False, True):
            assert len(kind.compiled(caseless)) == len(kind.patterns), kind.name
        for route in kind.routes:
            for pattern in route.when.values():
                re.compile(pattern, re.ASCII)


def test_the_general_readings_answers_are_never_certain_and_always_offer_chapter_09():
    """What the explain page says of these readings: ranked, not sure, with chapter 09's method among the chapters."""
    for text in FROM_THE_SOURCES + PROSE + TWO_GPUS + LOADED_WITHOUT_THE_GPU + INSIDE:
        d = diagnose(text)
        assert d.device_error and not d.confident, (text, d.kind)
        assert "09-debugging" in [r.chapter for r in d.ranking], (text, d.kind, [r.chapter for r in d.ranking])


def test_a_device_index_of_minus_one_is_the_cpu():
    """The sparse constructors' check prints device numbers, -1 for the CPU: both sides are named, in both languages."""
    from devicelab.explain import render

    d = diagnose("RuntimeError: device of indices (0) must match device of values (-1)")
    assert d.device_error and set(d.devices) == {"cuda:0", "cpu"}
    for lang in ("en", "zh"):
        assert "cpu" in render("RuntimeError: device of indices (0) must match device of values (-1)", lang)
    # ... and "device -1" in words, beside a GPU's number
    d = diagnose("Incompatible device of velocity tensor: expected device 0, received device -1")
    assert d.device_error and set(d.devices) == {"cuda:0", "cpu"}


def test_the_same_device_check_cut_after_its_argument_still_reads_the_argument():
    """The 2.8 wording cut after "but got index is on cuda:0" (a title, a log cut short): the argument is read, and
    an index points to chapter 03 as the whole message does."""
    d = diagnose("[Bug] Node failed: RuntimeError: Expected all tensors to be on the same device, but got index is on "
                 "cuda:0...")
    assert d.device_error and d.chapter == "03-embedding" and d.argument == "index", (d.kind, d.chapter)
    d = diagnose("RuntimeError: Expected all tensors to be on the same device, but got mat2 is on cpu")
    assert d.device_error and d.argument == "mat2" and d.chapter == "01-devices"


@pytest.mark.parametrize("exception", ["RuntimeError", "StopIteration", "AttributeError"])
def test_a_dataparallel_replica_header_alone_points_to_chapter_06_without_calling_it_a_device_error(exception):
    """The header says where the error happened (a replica on one of several GPUs), not what it was: chapter 06 and
    the replica's own message, not "not recognised", and no device error claimed."""
    d = diagnose(f"{exception}: Caught {exception} in replica 1 on device 1.\nOriginal Traceback (most recent call "
                 "last):\n  File \"/x/site-packages/torch/nn/parallel/parallel_apply.py\", line 97, in _worker")
    assert d.recognised and not d.device_error and d.chapter == "06-multigpu", (d.kind, d.chapter)
    assert "replica 1" in d.match.reading("en") and "副本" in d.match.reading("zh")
    from devicelab.errors import LABELS
    from devicelab.explain import render_diagnosis

    for lang in ("en", "zh"):  # "not known to be" a device error, not "not" one
        text = render_diagnosis(d, lang)
        assert text.startswith(LABELS["undecided"][lang]) and LABELS["not_device"][lang] not in text


def test_the_replicas_own_message_answers_before_the_header():
    """When the replica's message is in the paste, its family answers: a device error here, a shape error there."""
    head = "RuntimeError: Caught RuntimeError in replica 1 on device 1.\nOriginal Traceback (most recent call last):\n"
    d = diagnose(head + "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                 "cuda:1 and cuda:0!")
    assert d.device_error and d.chapter == "06-multigpu", (d.kind, d.chapter)
    d = diagnose(head + "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x10 and 20x2)")
    assert not d.device_error and d.kind != "dataparallel_replica", d.kind


IN_WORDS = [
    ("数据放在cpu，模型放在gpu，导致报错", "01-devices"),
    ("权重加载到了CPU上，但输入在GPU上，运行就报错", "01-devices"),
    ("把模型放到了cuda:1，但是数据在cuda:0，训练时报错", "06-multigpu"),
    ("gpu上训练的模型在cpu上加载报错", "07-checkpoints"),
    ("The model is on cuda:0 but the labels are still on the CPU.\nTraceback (most recent call last):\n"
     "  File \"train.py\", line 9, in <module>\nRuntimeError: the loss failed", "01-devices"),
]
NOT_IN_WORDS = [
    "在CPU上可以运行，在GPU上就报错",  # conditions, not two things
    "模型放在GPU上，数据也放在GPU上，还是报错",  # one device twice
    "The model is on cuda:0 and the data is on cuda:0 too.\nRuntimeError: CUDA out of memory. Tried to allocate 2 GiB",
]


@pytest.mark.parametrize("text, chapter", IN_WORDS)
def test_two_things_each_on_its_device_in_the_posters_words_are_read_anywhere_in_the_paste(text, chapter):
    """Chinese posts put the words before "报错" on its line, and English ones above the traceback: where the paste
    names a thing on each device (a model, data, inputs, weights, ...), the pair is read there too."""
    d = diagnose(text)
    assert d.device_error and d.chapter == chapter, (d.kind, d.chapter)


@pytest.mark.parametrize("text", NOT_IN_WORDS)
def test_a_pair_in_words_needs_a_thing_on_each_of_two_devices(text):
    assert not diagnose(text).device_error


def test_the_same_device_check_with_a_lower_case_first_letter_reads_as_the_check():
    """A pull request's title often lowers the first letter: the argument and operation are still read."""
    d = diagnose("Fixing error: expected all tensors to be on the same device, but found at least two devices, cuda:0 "
                 "and cpu! (when checking argument for argument tensors in method wrapper_CUDA_cat)")
    assert d.kind == "same_device" and d.argument == "tensors" and d.chapter == "05-inside", (d.kind, d.chapter)


def test_an_optimizer_resumed_from_a_checkpoint_in_words_points_to_chapter_07():
    d = diagnose("Error when I load the checkpoint and fine-tune with the optimizer: RuntimeError: expected backend "
                 "CPU and dtype Float but got backend CUDA and dtype Float")
    assert d.device_error and d.chapter == "07-checkpoints", (d.kind, d.chapter)
    d = diagnose("RuntimeError: expected backend CPU and dtype Float but got backend CUDA and dtype Float")
    assert d.device_error and d.chapter == "01-devices", (d.kind, d.chapter)


def test_a_class_whose_name_ends_in_generator_is_no_random_generator():
    d = diagnose("The CatalogueGenerator keeps some tensors as plain attributes, which are still on the CPU after "
                 ".to('cuda').")
    assert d.device_error and d.chapter != "04-batches", d.chapter


def test_a_chinese_word_for_the_error_takes_the_clause_before_it_and_no_more():
    """"显卡device不一致错误" names the error before 错误; the clause before "报错" in "在CPU上可以运行，在GPU上就报错"
    names one device, so it stays no device error."""
    from devicelab.errors.core import error_part

    assert error_part("2*22G多卡推理,显卡device不一致错误") == "显卡device不一致错误"
    assert error_part("在CPU上可以运行，在GPU上就报错") == "在GPU上就报错"
    assert error_part("RuntimeError: x") == "RuntimeError: x"


@pytest.mark.parametrize("text", [
    "expected FloatTensor but found cuda.FloatTensor",  # a title that drops the "torch."
    "RuntimeError: expected torch.cuda.LongTensor but found LongTensor",
    'AssertionError: assert self.qweight.device.type == "cuda"',  # a failed assert on a tensor's device
])
def test_legacy_type_names_without_torch_and_an_assert_on_a_device_are_read(text):
    d = diagnose(text)
    assert d.device_error, (text, d.kind)


def test_two_legacy_names_of_one_device_are_no_pair():
    assert not diagnose("expected FloatTensor but found LongTensor").device_error
    assert not diagnose("expected cuda.FloatTensor but found cuda.LongTensor").device_error


def test_a_checkpoint_restored_to_a_name_pytorch_does_not_know_is_declined_with_chapter_07():
    """The real message of `torch.load(..., map_location="gpu")` on this machine: "gpu" is no device name, so the
    message's tag is not a second device. A real tag (a GPU the checkpoint was saved on) stays a device error."""
    import io

    import torch

    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError) as raised:
        torch.load(buffer, map_location="gpu")
    message = f"RuntimeError: {raised.value}"
    assert "(tagged with gpu)" in message
    d = diagnose(message)
    assert (d.device_error, d.kind, d.chapter) == (False, "location_tag", "07-checkpoints")
    real = diagnose(message.replace("(tagged with gpu)", "(tagged with cuda:1)"))
    assert real.device_error and real.chapter == "07-checkpoints"


@pytest.mark.parametrize("indexed, chapter", [("cuda:1", "06-multigpu"), ("cuda:0", "06-multigpu"),
                                              ("cpu", "05-inside")])
def test_indices_refused_by_a_tensor_on_a_gpu_are_on_another_gpu(indexed, chapter):
    """CPU indices are accepted by a tensor on any device: when the indexed tensor is on a GPU and still refuses
    them, the indices are on another accelerator (two GPUs mixed); a tensor on the CPU refuses indices on a GPU."""
    d = diagnose(f"RuntimeError: indices should be either on cpu or on the same device as the indexed tensor "
                 f"({indexed})")
    assert d.device_error and d.kind == "index_device" and d.chapter == chapter, (d.kind, d.chapter)


def test_a_batch_size_is_no_batch_left_behind():
    """'batch size' names a setting, not a batch of data: it does not send the reader to chapter 04."""
    text = "With batch size 8 the labels are on cpu and the logits are on cuda:0."
    assert diagnose(text).chapter == "01-devices"
    assert diagnose(text.replace("batch size 8", "a batch from the loader")).chapter == "04-batches"


# The twenty-fifth batch's development half: a C++ program's paste (libtorch, AOTInductor), where the stack's frames
# name the exception's constructor (`c10::Error::Error(...)`) and the message is under "what():" or after
# "Exception in <library>:". Paraphrases written for these tests.
CPP_FRAMES = ("frame #0: c10::Error::Error(c10::SourceLocation, std::string const&) + 0x2a (0x7f01 in libc10.so)\n"
              "frame #1: at::TensorIterator::compute_types() + 0x3b5 (0x7f02 in libtorch_cpu.so)\n"
              "frame #2: at::TensorIterator::build() + 0x46 (0x7f03 in libtorch_cpu.so)\n")


@pytest.mark.parametrize("text, chapter", [
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  expected type CUDAFloatType but got "
     "CPUFloatType (compute_types at aten/src/ATen/native/TensorIterator.cpp:134)\n" + CPP_FRAMES, "01-devices"),
    ("[E1201 10:00:00.000 shim_common.cpp:40] Exception in aoti_torch: Specified device cuda:1 does not match device "
     "of data cuda:0\nException raised from make_tensor at aten/src/ATen/Functions.cpp:25 (most recent call first):\n"
     + CPP_FRAMES, "06-multigpu"),
])
def test_a_cpp_programs_message_is_read_under_its_stack_frames(text, chapter):
    d = diagnose(text)
    assert d.device_error and d.chapter == chapter, (d.kind, d.chapter)


def test_a_cpp_stack_frame_is_no_error_line():
    """Frames that name `c10::Error::Error` are read as a stack, not as the message: a C++ out-of-memory stays one."""
    d = diagnose("terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA out of memory. Tried "
                 "to allocate 20.00 MiB (GPU 0; 3.95 GiB total capacity)\n" + CPP_FRAMES)
    assert not d.device_error and d.kind == "out_of_memory", d.kind


# The twenty-fifth batch's development half, in the posters' words (paraphrases): a program that works on one GPU and
# fails on another (chapter 06), a model a library function leaves behind, a buffer loaded where CUDA is missing
# (chapter 07), an extension without a CPU implementation, two places either side of "mismatch".
WORKS_ON_ONE_GPU = [
    "It runs fine on cuda:0, but on cuda:1 the Triton kernel fails with an error.",
    "With the model on cuda:0 everything works fine. But when I move it to cuda:1, this error occurs:\n"
    "RuntimeError: Triton Error [CUDA]: context is destroyed",
    "Inference crashes on GPU 1 but works on GPU 0.",
    "在cuda:0上运行正常，换到cuda:1上就报错",
]
POSTERS_WORDS_25 = [
    ("The prune function returns a new model but didn't move the model to the selected device, so it is on the CPU.",
     "01-devices"),
    ("Is it possible to load the saved replay buffer on machines where CUDA is not available?", "07-checkpoints"),
    ("knn.cpp error: cpu not support", "01-devices"),
    ("The helper returns its estimates on the CPU, causing a mismatch when they are written into tensors created on "
     "the GPU.", "01-devices"),
]
NEGATIVES_25 = [
    "It works fine on GPU 0, but GPU 1 stays idle the whole time.",
    "Training works on GPU 0 but on GPU 1 I get CUDA out of memory.",
    "I have an RTX 3090 GPU 24 GB and the model runs on GPU but is slow.",
    "I did not move to the new cluster because the GPU queue is long.",
    "We load the model on machines where CUDA is available and it is fast.",
    "There is a version mismatch on the server with GPU drivers.",
    "ERROR: the wheel torch-2.1.0+cpu not supported on this platform",
]


@pytest.mark.parametrize("text", WORKS_ON_ONE_GPU)
def test_a_program_that_works_on_one_gpu_and_fails_on_another_points_to_chapter_06(text):
    d = diagnose(text)
    assert d.device_error and d.chapter == "06-multigpu", (d.kind, d.chapter)


def test_the_reading_of_a_program_that_works_on_one_gpu_names_the_current_device():
    """The answer says which GPU works and which fails, and where to look: what stays on the current CUDA device."""
    d = diagnose("Inference crashes on GPU 1 but works on GPU 0.")
    en, zh = d.match.reading("en"), d.match.reading("zh")
    assert "works on GPU 0 and fails on GPU 1" in en and "torch.cuda.set_device()" in en
    assert "在 GPU 0 上正常，在 GPU 1 上出错" in zh and "torch.cuda.set_device()" in zh


@pytest.mark.parametrize("value, device", [("GPU 1", "cuda:1"), ("gpu:0", "cuda:0"), ("GPU#2", "cuda:2"),
                                           ("gpu1", "cuda:1"), ("device 3", "cuda:3"), ("device -1", "cpu")])
def test_a_gpu_named_by_its_number_is_that_cuda_device(value, device):
    from devicelab.errors import device_of

    assert device_of(value) == device


# The twenty-sixth batch's development half, in the posters' words (paraphrases written for these tests).
POSTERS_WORDS_26 = [
    # a program that works on the default GPU only, with or without a pair of numbers (chapter 06)
    ("The failure shows up only on my second GPU (cuda:1). It works fine on cuda:0.", "06-multigpu"),
    ("The custom op only works with cuda:0; on the other cards the boxes come out wrong.", "06-multigpu"),
    ("Wrong results on non-default GPUs from the CUDA extension.", "06-multigpu"),
    ("The demo script is hard-coded to GPU 0.", "06-multigpu"),
    ("这个脚本必须为0卡，换成别的卡就不行", "06-multigpu"),
    ("There's a mismatched device error when the worker's GPU differs from its local rank.", "06-multigpu"),
    ("拼接的时候，两个张量被分配到了不同的GPU上", "06-multigpu"),
    # the old "tensors are on different GPUs" from someone with one GPU: the CPU and the GPU (chapter 01)
    ("tensors are on different GPUs\nI run the demo but I have only one GPU.", "01-devices"),
    # a device asked for and another one used
    ("With device=cpu the model still gets loaded onto cuda.", "01-devices"),
    ("在 device=cpu 的时候还是会加载到cuda上", "01-devices"),
    ("Validation fails at random because some tensors being on the cpu when the transformer is called.",
     "01-devices"),
    ("The CPU vs GPU error comes from the grid coordinates.", "01-devices"),
    ("RuntimeError: !x.is_cuda() Internal Assert Failed at kernel.cpp", "01-devices"),
    # loading (chapter 07)
    ("We should pass map_location when loading the weights: it fails on a machine with only CPU.", "07-checkpoints"),
    ("device meta is invalid when offloading the transformer's blocks", "07-checkpoints"),
]
NEGATIVES_26 = [
    "It works on GPU 0. GPU 1 is not available on this node.",
    "It only works on CUDA, and my laptop has no GPU.",
    "The installer is hard-coded to CUDA 11.8.",
    "I have only one GPU, how do I train faster?",
    "Set map_location to cpu to speed up loading.",
    "CPU vs GPU performance comparison for the model",
    "We benchmarked with device=cpu and it still runs on one core.",
    "Mismatched device names between the config and nvidia-smi",
]


# The twenty-seventh batch's development half: fixes and reports in their authors' words (paraphrases).
POSTERS_WORDS_27 = [
    ("small fix: moved new tensors to the same device as the rest", "05-inside"),
    ("Tensors created on the fly stay on the CPU while the model is on cuda:0.", "05-inside"),
    ("The running stats are not tracked by the module as a buffer, so .to(device) leaves them behind.", "05-inside"),
    ("In DataParallel, self.device points to the root device on every replica.", "06-multigpu"),
    ("load_model() tries to load on GPU when no GPU is present on the laptop.", "07-checkpoints"),
    ("RuntimeError: Cannot post-process meta tensor decoder.weight", "07-checkpoints"),
    ("Fix the device mis-match bug in mini-batch inference with edge features.", "04-batches"),
]
NEGATIVES_27 = [
    "We need new tensors for the demo; the GPU has 24 GB.",
    "The dataset is created on the fly from the CSV files on the GPU server.",
    "load the model on GPU when training is done; there is no GPU in the CI, so the test is skipped.",
    "The optimizer state is not registered as a parameter, please check the docs.",
    "The index points to the first GPU in the list returned by nvidia-smi.",
    "The tokenizer cannot process meta information in the prompt.",
]


@pytest.mark.parametrize("text, chapter", POSTERS_WORDS_25 + POSTERS_WORDS_26 + POSTERS_WORDS_27)
def test_the_posters_words_of_the_twenty_fifth_to_seventh_batches_are_read(text, chapter):
    d = diagnose(text)
    assert d.device_error and d.chapter == chapter, (d.kind, d.chapter)


@pytest.mark.parametrize("text", NEGATIVES_25 + NEGATIVES_26 + NEGATIVES_27)
def test_the_look_alikes_of_the_twenty_fifth_to_seventh_batches_stay_negatives(text):
    assert not diagnose(text).device_error, diagnose(text).kind


def test_a_program_that_works_on_the_default_gpu_only_is_read_without_a_pair_of_numbers():
    d = diagnose("Wrong results on non-default GPUs from the CUDA extension.")
    en, zh = d.match.reading("en"), d.match.reading("zh")
    assert "works on the default GPU" in en and "torch.cuda.set_device()" in en and "{" not in en
    assert "默认 GPU" in zh and "torch.cuda.set_device()" in zh and "{" not in zh
