"""The error index: every wording of a device error is recognised, and its fields are read out."""

import string

import pytest
import torch
from torch import nn

from devicelab import messages
from devicelab.chapters import MODULES
from devicelab.errors import KINDS, Match, lookup, match_kind

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
SAME_DEVICE_FIELDS = {
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


@pytest.mark.parametrize("message", UNRELATED)
def test_an_unrelated_message_matches_nothing(message):
    assert lookup(message) == []
    assert all(match_kind(name, message) is None for name in KINDS)


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


def test_a_reading_without_fields_shows_question_marks():
    reading = match_kind("same_device", MPS_PLACEHOLDER).reading("en")
    assert "?" in reading and "{" not in reading


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_matches_its_own_example(name):
    kind = KINDS[name]
    assert kind.match(kind.example) is not None
    assert name in kinds_of(kind.example)


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_reads_in_both_languages_with_the_same_fields(name):
    kind = KINDS[name]
    assert set(kind.reading) == {"en", "zh"}
    assert placeholders(kind.reading["en"]) == placeholders(kind.reading["zh"])
    for lang in ("en", "zh"):
        Match(kind, {}).reading(lang)  # every placeholder has a default: no KeyError


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_points_to_a_chapter_that_exists(name):
    assert KINDS[name].chapter in MODULES


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
