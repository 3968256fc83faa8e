"""The error index knows chapter 07's messages: a checkpoint from a missing GPU, the module. prefix, weights_only."""

import pytest

from devicelab.errors import KINDS, lookup, match_kind

IS_AVAILABLE = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running "
    "on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to "
    "the CPU."
)
DEVICE_COUNT = (
    "Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use torch.load "
    "with map_location to map your storages to an existing device."
)
PREFIX = (
    'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "body.weight", "body.bias". \n\t'
    'Unexpected key(s) in state_dict: "module.body.weight", "module.body.bias". '
)
WEIGHTS_ONLY = "Weights only load failed. This file can still be loaded, to do so you have two options"


@pytest.mark.parametrize(("message", "kind"), [
    (IS_AVAILABLE, "cuda_deserialize"),
    (DEVICE_COUNT, "cuda_deserialize"),
    (PREFIX, "state_dict_prefix"),
    (WEIGHTS_ONLY, "weights_only_load"),
])
def test_each_message_is_its_kind_and_goes_to_chapter_07(message, kind):
    (found,) = lookup(message)
    assert found.kind.name == kind and found.chapter == "07-checkpoints"
    assert found.reading("en") and found.reading("zh")


def test_the_deserialize_wordings_read_the_device():
    assert match_kind("cuda_deserialize", IS_AVAILABLE).fields == {"want": "CUDA"}
    assert match_kind("cuda_deserialize", DEVICE_COUNT).fields == {"want": "CUDA"}


def test_missing_keys_without_the_prefix_are_not_this_kind():
    message = ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight". \n\t'
               'Unexpected key(s) in state_dict: "head.weight". ')
    assert match_kind("state_dict_prefix", message) is None


def test_the_examples_match_their_own_kinds():
    for name in ("cuda_deserialize", "state_dict_prefix", "weights_only_load"):
        assert match_kind(name, KINDS[name].example) is not None
