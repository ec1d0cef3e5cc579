"""Conveyor's Python bridge: zero-copy tensors in and out through DLPack and the CUDA Array
Interface, over the C API (libconveyor_c.so) with ctypes only — any CPython 3.9+.

    t = conveyor.as_tensor(torch_or_cupy_or_jax_or_numba_array)
    y = torch.from_dlpack(t)           # or cupy.from_dlpack, jax.dlpack.from_dlpack,
                                       # numba.cuda.as_cuda_array
"""
from ._lib import (ABI_VERSION, CudaError, Error, InteropError, InvalidArgumentError,  # noqa: F401
                   OutOfMemoryError)
from ._lib import path as library_path  # noqa: F401
from ._tensor import HostView, Stream, Tensor, as_tensor, default_stream, empty, scale_add  # noqa: F401
from .pipeline import ConfigError, Padded, Pipeline, PluginError  # noqa: F401
from .functions import register_function, registered_functions, unregister_function  # noqa: F401
from ._version import __version__  # noqa: F401

__all__ = ["Tensor", "HostView", "Stream", "as_tensor", "empty", "scale_add", "default_stream", "Error", "InteropError",
           "InvalidArgumentError", "CudaError", "OutOfMemoryError", "ABI_VERSION", "library_path", "Pipeline",
           "ConfigError", "PluginError", "Padded", "register_function", "unregister_function",
           "registered_functions"]
