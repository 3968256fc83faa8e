"""The error index knows chapter 05's messages: the RNN's own wording and torch.cat's, old and new."""

import pytest
import torch
from torch import nn

from devicelab.errors import KINDS, lookup, match_kind

RNN_HIDDEN = (
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu"
)
RNN_PARAMETER = (
    "Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor at cuda:0"
)
CAT_NOW = (
    "Expected all tensors to be on the same device, but got tensors is on cpu, different from other tensors on "
    "cuda:0 (when checking argument in method wrapper_CUDA_cat)"
)
CAT_1X = "All input tensors must be on the same device. Received cuda:0 and cpu"
CAT_OLDER = (
    "Expected object of backend CUDA but got backend CPU for sequence element 1 in sequence argument at "
    "position #1 'tensors'"
)


def test_the_rnn_hidden_state_wording_is_read_out():
    (found,) = lookup(RNN_HIDDEN)
    assert found.kind.name == "rnn_hidden_device" and found.chapter == "05-inside"
    assert found.fields == {"arg": "hidden", "want": "cuda:0", "found": "cpu"}
    assert "new_zeros" in found.reading("en") and "new_zeros" in found.reading("zh")


def test_the_rnn_parameter_wording_is_the_same_kind():
    (found,) = lookup(RNN_PARAMETER)
    assert found.kind.name == "rnn_hidden_device"
    assert found.fields == {"arg": "parameter", "want": "cpu", "found": "cuda:0"}


def test_the_installed_torch_prints_a_wording_the_index_knows():
    gru = nn.GRU(3, 4, batch_first=True).to("meta")
    with pytest.raises(RuntimeError) as info:
        gru(torch.ones(2, 5, 3, device="meta"), torch.zeros(1, 2, 4))
    assert match_kind("rnn_hidden_device", str(info.value)) is not None


def test_todays_cat_wording_is_the_generated_check_routed_to_chapter_05():
    (found,) = lookup(CAT_NOW)
    assert found.kind.name == "same_device" and found.chapter == "05-inside"
    assert found.fields["arg"] == "tensors"


@pytest.mark.parametrize("message", [CAT_1X, CAT_OLDER])
def test_older_cat_wordings_are_their_own_kind(message):
    (found,) = lookup(message)
    assert found.kind.name == "cat_same_device" and found.chapter == "05-inside"
    assert found.reading("en") and found.reading("zh")


def test_the_examples_match_their_own_kinds():
    for name in ("rnn_hidden_device", "cat_same_device"):
        assert match_kind(name, KINDS[name].example) is not None


def test_other_same_device_messages_keep_their_chapters():
    addmm = ("Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
             "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)")
    assert lookup(addmm)[0].chapter == "01-devices"
