"""Puts python/ (the conveyor package) on sys.path, and what the test files share: the fixtures `gpu`
(skips with the reason without a usable CUDA device) and `torch` (PyTorch with CUDA), and
`repo_file` (a file of the repository in either layout: the repository's or the GPU bundle's)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def repo_file(repo_path, bundle_path):
    """The path of a file these tests read, in whichever layout they run from: the GPU bundle's
    (tools/gpu_bundle.sh copies tests/python to .bundle/python_tests, bench/ to .bundle/suite and
    pipelines/*.yaml to .bundle/pipelines; `bundle_path` is relative to .bundle/), else the
    repository's (`repo_path`, relative to its root). Raises FileNotFoundError naming both."""
    candidates = [os.path.join(HERE, "..", bundle_path), os.path.join(HERE, "..", "..", repo_path)]
    for path in candidates:
        if os.path.exists(path):
            return os.path.normpath(path)
    raise FileNotFoundError("expected %s (GPU bundle layout) or %s (repository layout), found neither" %
                            tuple(os.path.normpath(p) for p in candidates))


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
