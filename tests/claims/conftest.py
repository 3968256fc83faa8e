"""Shared fixtures for the claims tests.

Tests marked ``@pytest.mark.gpu`` need a CUDA GPU. On a machine without one they are skipped (not
failed), so the suite passes on CPU; tools/gpu_check.py runs them on a lent GPU.
"""

import pytest
import torch

GPU_SKIP_REASON = "needs a CUDA GPU: run tools/gpu_check.py"


def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is not None and not torch.cuda.is_available():
        pytest.skip(GPU_SKIP_REASON)


@pytest.fixture
def cuda():
    """The CUDA device, or skip the test when there is none."""
    if not torch.cuda.is_available():
        pytest.skip(GPU_SKIP_REASON)
    return torch.device("cuda")
