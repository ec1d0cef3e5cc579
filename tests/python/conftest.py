"""Puts python/ (the conveyor package) on sys.path, and the fixtures the test files share: `gpu`
(skips with the reason without a usable CUDA device) and `torch` (PyTorch with CUDA)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import importlib  # noqa: E402

import pytest  # noqa: E402


def _import(name):
    try:
        return importlib.import_module(name)
    except Exception as e:  # ImportError, or a library that fails to initialise
        pytest.skip("%s is not importable: %s" % (name, e))


_GPU_REASON = []  # computed once, on first use (importing conveyor may fail: the tests say so)


def _gpu_reason():
    if not _GPU_REASON:
        try:
            import conveyor
            conveyor.empty((1,), "float32", device="cuda")
            _GPU_REASON.append(None)
        except Exception as e:  # conveyor.Error, or conveyor not importable
            _GPU_REASON.append(str(e))
    return _GPU_REASON[0]


@pytest.fixture
def gpu():
    reason = _gpu_reason()
    if reason is not None:
        pytest.skip("needs a CUDA GPU: " + reason)


@pytest.fixture
def torch(gpu):
    torch = _import("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch
