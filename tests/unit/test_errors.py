"""The error index: every wording of a device error is recognised, and its fields are read out."""

import string

import pytest
import torch
from torch import nn

from devicelab import messages
from devicelab.chapters import MODULES
from devicelab.errors import KINDS, Match, diagnose, lookup, match_kind

# The generated same-device check, by torch version (DESIGN.md section 8).
SAME_DEVICE_WORDINGS = {
    ">=2.8": (
        "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
        "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)"
    ),
    "1.9-2.7": (
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
        "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)"
    ),
    "<=1.8": (
        "Expected object of device type cuda but got device type cpu for argument #2 'mat1' "
        "in call to _th_addmm"
    ),
}
SAME_DEVICE_FIELDS = {  # the fields a match reads (markers of which wording matched, named _x, are not fields)
    ">=2.8": {"arg": "mat1", "found": "cpu", "want": "cuda:0", "op": "wrapper_CUDA_addmm"},
    "1.9-2.7": {"arg": "mat1", "found": "cpu", "want": "cuda:0", "op": "wrapper_CUDA_addmm"},
    "<=1.8": {"arg": "mat1", "found": "cpu", "want": "cuda", "op": "_th_addmm"},
}
# Seed 004's mistake (CPU indices into a CUDA embedding) as torch >= 2.8 prints it.
INDEX_SELECT_28 = (
    "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors "
    "on cuda:0 (when checking argument in method wrapper_CUDA__index_select)"
)
CONV = "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
CONV_REVERSED = (
    "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same "
    "or input should be a MKLDNN tensor and weight is a dense tensor"
)
DATAPARALLEL = (
    "module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them "
    "on device: cpu"
)
MPS_LINEAR = "Tensor for argument input is on cpu but expected on mps"
MPS_PLACEHOLDER = "Placeholder storage has not been allocated on MPS device!"
UNRELATED = [
    "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity)",
    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    "expected scalar type Long but found Float",
    "",
]


def kinds_of(message: str) -> list[str]:
    return [match.kind.name for match in lookup(message)]


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


# --- the generated same-device check ------------------------------------------------------------


@pytest.mark.parametrize("version", list(SAME_DEVICE_WORDINGS))
def test_every_version_of_the_generated_check_is_recognised(version):
    message = SAME_DEVICE_WORDINGS[version]
    assert kinds_of(message) == ["same_device"]
    assert lookup(message)[0].fields == SAME_DEVICE_FIELDS[version]


@pytest.mark.parametrize("version", list(SAME_DEVICE_WORDINGS))
def test_match_kind_reads_the_same_fields_as_lookup(version):
    message = SAME_DEVICE_WORDINGS[version]
    assert match_kind("same_device", message).fields == SAME_DEVICE_FIELDS[version]
    assert match_kind("conv_input_weight_type", message) is None


def test_the_message_is_found_inside_a_pasted_traceback():
    traceback = f'  File "train.py", line 12, in <module>\nRuntimeError: {SAME_DEVICE_WORDINGS[">=2.8"]}\n'
    assert lookup(traceback)[0].fields == SAME_DEVICE_FIELDS[">=2.8"]


def test_seed_004_mistake_in_todays_wording_is_recognised():
    assert lookup(INDEX_SELECT_28)[0].fields == {
        "arg": "index",
        "found": "cpu",
        "want": "cuda:0",
        "op": "wrapper_CUDA__index_select",
    }


def test_the_installed_torch_addmm_check_is_recognised(addmm_device_error, real_message):
    message = real_message(addmm_device_error)
    assert kinds_of(message) == ["same_device"], message
    # mat2 (meta) is the odd one out among CPU tensors, in the <=2.7 and >=2.8 wordings alike.
    assert lookup(message)[0].fields == {
        "arg": "mat2",
        "found": "meta",
        "want": "cpu",
        "op": "wrapper_CUDA_addmm",
    }


def test_the_installed_torch_nll_loss_check_is_recognised(nll_loss_device_error, real_message):
    message = real_message(nll_loss_device_error)
    assert kinds_of(message) == ["same_device"], message
    assert lookup(message)[0].fields == {
        "arg": "weight",
        "found": "cpu",
        "want": "meta",
        "op": "wrapper_CUDA_nll_loss_forward",
    }


def test_the_installed_torch_elementwise_check_is_recognised(elementwise_device_error, real_message):
    message = real_message(elementwise_device_error)
    assert message.startswith("Expected all tensors to be on the same device")
    assert kinds_of(message) == ["same_device"], message


def test_the_elementwise_wording_printed_on_a_gpu_is_recognised():
    message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    assert kinds_of(message) == ["same_device"]


# --- conv, DataParallel, MPS --------------------------------------------------------------------


def test_the_conv_input_weight_message_is_recognised():
    assert kinds_of(CONV) == ["conv_input_weight_type"]
    assert lookup(CONV)[0].fields == {"input": "torch.cuda.FloatTensor", "weight": "torch.FloatTensor"}


def test_the_reversed_conv_message_with_its_mkldnn_tail_is_recognised():
    assert lookup(CONV_REVERSED)[0].fields == {
        "input": "torch.FloatTensor",
        "weight": "torch.cuda.FloatTensor",
    }


def test_the_dataparallel_module_message_is_recognised():
    assert kinds_of(DATAPARALLEL) == ["dataparallel_module_device"]
    assert lookup(DATAPARALLEL)[0].fields == {"want": "cuda:0", "found": "cpu"}


def test_the_installed_torch_dataparallel_message_is_recognised(real_message):
    # DataParallel.forward checks its module before scattering; with two device ids on a CPU-only
    # machine it raises its real message for a module left on the CPU.
    wrapped = nn.DataParallel(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)))
    wrapped.device_ids = [0, 1]
    wrapped.src_device_obj = torch.device("cuda:0")
    message = real_message(lambda: wrapped(torch.randn(1, 3, 5, 5)))
    assert kinds_of(message) == ["dataparallel_module_device"], message
    assert lookup(message)[0].fields == {"want": "cuda:0", "found": "cpu"}


def test_the_mps_linear_message_is_recognised_with_its_fields():
    assert match_kind("same_device", MPS_LINEAR).fields == {"arg": "input", "found": "cpu", "want": "mps"}


@pytest.mark.parametrize(
    "message", [MPS_LINEAR, MPS_PLACEHOLDER, "Tensor for argument #1 'self' is on cpu but expected on mps"]
)
def test_mps_wordings_are_accepted_for_both_kinds_mps_can_print_them_for(message):
    assert kinds_of(message) == ["same_device", "conv_input_weight_type"]
    assert match_kind("same_device", message) is not None and match_kind("conv_input_weight_type", message) is not None


@pytest.mark.parametrize("message", UNRELATED)
def test_an_unrelated_message_matches_no_device_family(message):
    assert lookup(message) == []
    assert all(match_kind(name, message) is None for name in KINDS if KINDS[name].device_error)


# --- readings and the index itself --------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", list(SAME_DEVICE_WORDINGS))
def test_the_same_device_reading_names_the_fields(lang, version):
    reading = lookup(SAME_DEVICE_WORDINGS[version])[0].reading(lang)
    for value in SAME_DEVICE_FIELDS[version].values():
        assert value in reading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_conv_reading_names_both_types(lang):
    reading = lookup(CONV)[0].reading(lang)
    assert "torch.cuda.FloatTensor" in reading
    assert "weight" in reading or "权重" in reading


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dataparallel_reading_names_both_devices(lang):
    reading = lookup(DATAPARALLEL)[0].reading(lang)
    assert "cuda:0" in reading and "cpu" in reading


def test_the_reading_follows_the_chosen_language():
    match = lookup(CONV)[0]
    messages.set_language("zh")
    assert match.reading() == match.reading("zh")
    assert match.reading() != match.reading("en")


def test_a_reading_without_fields_leaves_out_what_the_message_did_not_say():
    reading = match_kind("same_device", MPS_PLACEHOLDER).reading("en")
    assert "?" not in reading and "{" not in reading and "()" not in reading
    assert reading.startswith("On Apple's MPS device")  # its own reading: the message names no argument


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_matches_its_own_example(name):
    kind = KINDS[name]
    assert kind.match(kind.example) is not None
    if kind.indexed:
        assert name in kinds_of(kind.example)
    assert diagnose(kind.example).match.kind is kind


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_reads_in_both_languages_with_the_same_fields(name):
    kind = KINDS[name]
    assert set(kind.reading) == {"en", "zh"}
    assert placeholders(kind.reading["en"]) == placeholders(kind.reading["zh"])
    for lang in ("en", "zh"):
        Match(kind, {}).reading(lang)  # every placeholder has a default: no KeyError


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_and_route_points_to_a_chapter_that_exists_or_none(name):
    kind = KINDS[name]
    chapters = [kind.chapter, *kind.candidates] + [c for r in kind.routes for c in (r.chapter, *r.candidates)]
    assert all(c is None or c in MODULES for c in chapters), chapters
    assert kind.device_error or kind.causes == ()  # a declined family names no causes


def test_the_pytorch_1_9_typo_arugment_still_reads_the_argument_and_routes_it():
    message = ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
               "(when checking arugment for argument index in method wrapper__index_select)")
    found = lookup(message)[0]
    assert found.chapter == "03-embedding"
    assert found.fields["arg"] == "index" and found.fields["op"] == "wrapper__index_select"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_short_form_without_an_operation_is_read_without_question_marks(lang):
    short = lookup("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                   "cuda:0 and cpu!")[0]
    reading = short.reading(lang)
    assert "?" not in reading and "cuda:0" in reading and "cpu" in reading
    kind = KINDS["same_device"]
    assert placeholders(kind.reading_without_op["en"]) == placeholders(kind.reading_without_op["zh"])


# --- diagnose: the reading of a pasted text ---------------------------------------------------------------


ADDMM_GPU_MODEL = SAME_DEVICE_WORDINGS[">=2.8"]  # a GPU model fed a CPU batch
ADDMM_CPU_MODEL = (  # a CPU model fed a GPU batch: the check names mat1 again (DESIGN section 8)
    "Expected all tensors to be on the same device, but got mat1 is on cuda:0, different from other tensors "
    "on cpu (when checking argument in method wrapper_CUDA_addmm)"
)
SHORT_FORM = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def test_diagnose_reads_the_op_the_argument_and_both_devices():
    d = diagnose(ADDMM_GPU_MODEL)
    assert (d.device_error, d.kind, d.op, d.argument) == (True, "same_device", "wrapper_CUDA_addmm", "mat1")
    assert d.devices == ("cpu", "cuda:0")  # in the order the message names them
    assert d.chapter == "01-devices" and d.confident and d.candidates[0] == d.chapter
    assert d.causes == ("batch_not_moved",)


def test_the_same_argument_on_the_other_side_is_read_as_the_model_left_behind():
    d = diagnose(ADDMM_CPU_MODEL)
    assert d.argument == "mat1" and d.devices == ("cuda:0", "cpu")
    assert d.causes[0] == "model_not_moved"


@pytest.mark.parametrize(("message", "cause"), [
    (INDEX_SELECT_28, "ids_not_moved"),
    ("Expected all tensors to be on the same device, but got index is on cuda:0, different from other tensors on "
     "cpu (when checking argument in method wrapper_CUDA__index_select)", "table_not_moved"),
])
def test_an_embedding_goes_to_chapter_03_whichever_side_is_misplaced(message, cause):
    d = diagnose(message)
    assert d.chapter == "03-embedding" and d.causes[0] == cause
    # index_select alone could be another gather along an index (a graph's edges): 03 first, but a ranking
    assert not d.confident and d.candidates[:3] == ["03-embedding", "04-batches", "01-devices"]
    shown = diagnose("emb = self.embedding(tokens)\n" + message)  # an embedding in the paste: chapter 03, certain
    assert shown.chapter == "03-embedding" and shown.confident and shown.causes[0] == cause


def test_the_short_form_names_no_side_and_says_so():
    d = diagnose(SHORT_FORM)
    assert d.device_error and not d.confident and d.op is None and d.argument is None
    assert d.devices == ("cuda:0", "cpu") and len(d.causes) >= 2
    assert d.chapter == "01-devices" and "05-inside" in d.candidates


def test_a_loss_weight_goes_to_chapter_02_not_to_the_labels():
    d = diagnose(KINDS["same_device"].example)
    assert d.chapter == "02-dataparallel" and d.causes[0] == "loss_weight_not_moved"


def test_a_layer_norm_weight_is_not_sent_to_the_loss_section():
    d = diagnose("Expected all tensors to be on the same device, but got weight is on cpu, different from other "
                 "tensors on cuda:0 (when checking argument in method wrapper_CUDA__native_layer_norm)")
    assert d.chapter == "05-inside" and not d.confident and d.causes[0] == "layer_outside_to"


@pytest.mark.parametrize(("message", "chapter", "confident", "cause"), [
    (CONV, "02-dataparallel", False, "model_not_moved"),
    (CONV_REVERSED, "01-devices", True, "batch_not_moved"),
])
def test_the_conv_message_is_read_by_which_side_is_on_the_gpu(message, chapter, confident, cause):
    d = diagnose(message)
    assert (d.chapter, d.confident, d.causes[0]) == (chapter, confident, cause)
    assert set(d.devices) == {"cuda", "cpu"}


@pytest.mark.parametrize("message", [
    "Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
    "Input type (CUDAFloatTensor) and weight type (CUDAHalfTensor) should be the same",
    "Input type (c10::Half) and bias type (float) should be the same",
    "mat1 and mat2 must have the same dtype, but got Float and Half",
    "expected scalar type Half but found Float",
    "mat1和mat2必须具有相同的数据类型,但是得到了float和half",
])
def test_dtype_mismatches_are_declined_and_sent_to_chapter_08(message):
    d = diagnose(message)
    assert not d.device_error and d.kind == "dtype_mismatch" and d.chapter == "08-amp" and d.causes == ()


def test_a_label_dtype_mismatch_without_half_precision_is_declined_without_a_chapter():
    d = diagnose("Expected object of type torch.cuda.LongTensor but found type torch.cuda.FloatTensor for argument #2 "
                 "'target'")
    assert not d.device_error and d.kind == "dtype_mismatch" and d.chapter is None and d.causes == ()


@pytest.mark.parametrize(("message", "kind", "chapter"), [
    ("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "shape_mismatch", None),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "out_of_memory", None),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda_kernel_fault", None),
    ("RuntimeError: CUDA error: device-side assert triggered", "cuda_kernel_fault", None),
    ("AssertionError: Torch not compiled with CUDA enabled", "cuda_unavailable", "01-devices"),
    ("RuntimeError: CUDA error: invalid device ordinal", "invalid_device_ordinal", "06-multigpu"),
])
def test_other_errors_are_declined_with_a_pointer(message, kind, chapter):
    d = diagnose(message)
    assert (d.device_error, d.kind, d.chapter) == (False, kind, chapter)


@pytest.mark.parametrize(("message", "chapter"), [
    (DATAPARALLEL, "06-multigpu"),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1! (when "
     "checking argument for argument index in method wrapper_CUDA_scatter__value)", "06-multigpu"),
    ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight' ; but device "
     "1 does not equal 0 (while checking arguments for cudnn_convolution)", "06-multigpu"),
    ("DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device "
     "GPU modules or CPU modules, but got device_ids [0], output_device None, and module parameters "
     "{device(type='cpu')}.", "06-multigpu"),
    (RNN_HIDDEN := "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
     "tensor at cpu", "05-inside"),
    ("indices should be either on cpu or on the same device as the indexed tensor (cpu)", "05-inside"),
    ("Tensor on device meta is not on the expected device cuda:0!", "07-checkpoints"),
    ("Expected a 'cuda' device type for generator but found 'cpu'", "09-debugging"),
    ("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned", "04-batches"),
    ("Input, output and indices must be on the current device", "03-embedding"),
    ("Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for addmm)",
     "01-devices"),
    ("Expected object of device type cuda but got device type cpu for argument #1 'self' in call to "
     "_th_index_select", "03-embedding"),
    ("expected self and mask to be on the same device, but got mask on cpu and self on cuda:0", "01-devices"),
    ("Expected object of type torch.cuda.FloatTensor but found type torch.FloatTensor for argument #2 'hx'",
     "05-inside"),
    ("Inconsistent compute device and `device_id` on rank 1: cuda:0 vs cuda:1", "06-multigpu"),
])
def test_each_family_goes_to_the_chapter_that_explains_it(message, chapter):
    d = diagnose(message)
    assert d.device_error and d.chapter == chapter, d


def test_the_hand_written_check_reads_both_devices_from_its_tail():
    d = diagnose("grid_sampler(): expected input and grid to be on same device, but input is on cuda:0 and grid is "
                 "on cpu")
    assert d.kind == "hand_written_device_check" and d.devices == ("cuda:0", "cpu") and d.op == "grid_sampler"


def test_a_family_no_chapter_explains_falls_back_to_chapter_09_without_confidence():
    d = diagnose("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                 "memory first.")
    assert d.device_error and d.chapter == "09-debugging" and not d.confident


@pytest.mark.parametrize("message", [
    "RuntimeError: 输入类型(torch.cuda.FloatTensor)与权重类型(torch.FloatTensor)不匹配",  # quoted on page 02
    "RuntimeError：预期所有张量都在同一个设备上，但发现至少有两个设备，cuda:0 和 cpu！",
    "RuntimeError: 模型的参数和缓冲区必须在cuda:1 (device_ids[0])上,但发现有一个在cuda:2上",
    "PyTorch RuntimeError: 期望'cuda'设备类型的生成器但找到'cpu'",
])
def test_chinese_renderings_are_recognised(message):
    assert diagnose(message).device_error


# --- pastes ---------------------------------------------------------------------------------------------------


def test_a_soft_wrapped_crlf_quoted_paste_reads_like_the_message():
    pasted = ("> Traceback (most recent call last):\r\n>   File \"train.py\", line 3, in <module>\r\n"
              "> RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, "
              "different from\r\n"
              "> other tensors on cuda:0 (when checking argument in method wrapper_CUDA_ad\r\n> dmm)\r\n")
    d = diagnose(pasted)
    assert (d.op, d.argument, d.devices) == ("wrapper_CUDA_addmm", "mat1", ("cpu", "cuda:0"))


def test_a_truncated_tail_still_reads_the_family_and_the_devices():
    d = diagnose("RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different "
                 "from other tensors on cuda:0 (when checking argu")
    assert d.kind == "same_device" and d.devices == ("cpu", "cuda:0") and d.argument == "index"
    # cut inside the head: "to be" already says which message it was (every "Expected all tensors to be on ..." is
    # a device check), while "Expected all tenso" could be vmap's "Expected all tensors to have the same size ..."
    assert diagnose("RuntimeError: Expected all tensors to be on the sa").kind == "same_device"
    assert diagnose("RuntimeError: Expected all tenso").match is None


def test_full_width_punctuation_and_curly_quotes_are_read_as_ascii():
    d = diagnose("RuntimeError：Tensor for argument #2 ‘mat1’ is on CPU, but expected it to be on GPU")
    assert d.argument == "mat1" and d.devices == ("cpu", "cuda")


@pytest.mark.parametrize("text", ["", "   ", "hello", "x" * 100_000, "\x00\x1b[31m", None, 42])
def test_diagnose_never_raises_and_declines_what_it_does_not_know(text):
    d = diagnose(text)
    assert not d.device_error and d.chapter is None and d.kind is None and d.candidates == []


def test_every_exported_pattern_is_the_python_pattern_in_javascript_syntax():
    from devicelab.errors import export

    rules = export()
    # the catch-alls come last: hand-written checks, then the general reading of two devices (the error lines), then
    # two things each on its device in the poster's words (the whole paste), then DataParallel's replica header (only
    # when no message follows it), then mixed precision
    assert [k["name"] for k in rules["kinds"]][-5:] == ["hand_written_device_check", "two_devices",
                                                        "two_places_in_words", "dataparallel_replica", "amp_failure"]
    for kind in rules["kinds"]:
        for pattern in kind["patterns"]:
            assert "(?P<" not in pattern and "(?s)" not in pattern and "(?i)" not in pattern and "\\Z" not in pattern
            for cause in kind["causes"]:
                assert cause in rules["causes"]


# --- what the installed torch prints (meta standing in for the GPU, read as cuda:0) ------------------------------

_CUDA = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def _on_meta(*shape):
    return torch.ones(*shape, device="meta")


INSTALLED = {  # name: (the call, its family, device error, chapter)
    "embedding_bag": (lambda: torch.ops.aten._embedding_bag.default.redispatch(
        _CUDA, _on_meta(5, 3), torch.ones(4).long(), torch.ones(1).long()), "same_device", True, "03-embedding"),
    "layer_norm": (lambda: torch.ops.aten.native_layer_norm.default.redispatch(
        _CUDA, _on_meta(2, 3), [3], torch.ones(3), torch.ones(3), 1e-5), "same_device", True, "05-inside"),
    "where_short_form": (lambda: torch.ops.aten.where.self.redispatch(
        _CUDA, torch.ones(3).bool(), _on_meta(3), torch.ones(3)), "same_device", True, "01-devices"),
    "stft_window": (lambda: torch.stft(_on_meta(100), 16, window=torch.ones(16), return_complex=True),
                    "hand_written_device_check", True, "01-devices"),
    "grid_sample": (lambda: torch.nn.functional.grid_sample(_on_meta(1, 1, 4, 4), torch.ones(1, 2, 2, 2),
                                                    align_corners=False),
                    "expected_device", True, "01-devices"),
    "linear_half": (lambda: torch.nn.functional.linear(torch.ones(2, 3).half(), torch.ones(4, 3)),
                    "dtype_mismatch", False, "08-amp"),
    "conv_half": (lambda: torch.nn.functional.conv2d(torch.ones(1, 1, 4, 4).half(), torch.ones(1, 1, 3, 3),
                                                     torch.ones(1)), "dtype_mismatch", False, "08-amp"),
    "bmm_bfloat16": (lambda: torch.bmm(torch.ones(1, 2, 2), torch.ones(1, 2, 2).bfloat16()),
                     "dtype_mismatch", False, "08-amp"),
}


@pytest.mark.parametrize("name", list(INSTALLED))
def test_what_the_installed_torch_prints_is_read_into_its_family(name):
    call, kind, device_error, chapter = INSTALLED[name]
    with pytest.raises(RuntimeError) as caught:
        call()
    d = diagnose(str(caught.value).replace("meta", "cuda:0"))
    assert (d.kind, d.device_error, d.chapter) == (kind, device_error, chapter), str(caught.value)
    if device_error and kind != "hand_written_device_check":
        assert set(d.devices) == {"cuda:0", "cpu"}


# Pastes that hold one very long token (a base64 blob, a row of digits, a dotted path, a word wrapped at a fixed
# width), as long as the reader reads a paste. A wording that starts a name anywhere inside such a token scans the rest
# of it again at each character: before names were read from their first character, a line of "a." took 84 s.
LONG_TOKENS = {
    "letters": "a" * 40_000,
    "digits": "1" * 40_000,
    "dotted": "a." * 20_000,
    "underscored": "a_" * 20_000,
    "wrapped": ("a" * 79 + "\n") * 500,
    "exception names": "xError" * 6_600,
}


@pytest.mark.parametrize("name", sorted(LONG_TOKENS))
def test_a_paste_of_one_long_token_is_answered_in_seconds(name):
    import time

    started = time.perf_counter()
    d = diagnose(LONG_TOKENS[name])
    seconds = time.perf_counter() - started
    assert not d.device_error
    assert seconds < 5, f"{name}: {seconds:.1f} s"  # about 0.2 to 0.8 s here; 13 to 84 s before
