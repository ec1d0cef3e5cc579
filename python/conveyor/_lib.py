"""Loads libconveyor_c.so and declares the C API's signatures (pure ctypes, no compiled glue).

The library is looked up in $CONVEYOR_LIB, then next to this package. It is opened with
ctypes.CDLL, which releases the GIL during each call: producers' DLPack deleters and our release
callbacks take the GIL themselves when they need it.
"""
import ctypes
import os

ABI_VERSION = 1
MAX_DIMS = 8

OK = 0
STATUS_NAMES = {
    1: "CONVEYOR_ERROR_INVALID_ARGUMENT",
    2: "CONVEYOR_ERROR_INTEROP",
    3: "CONVEYOR_ERROR_CUDA",
    4: "CONVEYOR_ERROR_OUT_OF_MEMORY",
    5: "CONVEYOR_ERROR_CONFIG",
    6: "CONVEYOR_ERROR_PLUGIN",
    100: "CONVEYOR_ERROR_INTERNAL",
}

# conveyor_dtype_t values, in order.
DTYPES = ("bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64")
ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "int32": 4, "int64": 8, "float16": 2,
            "bfloat16": 2, "float32": 4, "float64": 8}

# Device types (DLPack codes).
DEVICE_CPU = 1
DEVICE_CUDA = 2
DEVICE_CUDA_HOST = 3
DEVICE_CUDA_MANAGED = 13


class Error(Exception):
    """A Conveyor call failed; the message says what was expected, what arrived and where."""


class InvalidArgumentError(Error, ValueError):
    pass


class InteropError(Error, BufferError):
    """A DLPack / CUDA Array Interface rule was broken (BufferError, as the DLPack protocol asks)."""


class CudaError(Error, RuntimeError):
    pass


class OutOfMemoryError(Error, MemoryError):
    pass


class ConfigError(Error, ValueError):
    """A pipeline definition is wrong; the message starts with file:line:col."""


class PluginError(Error, ImportError):
    pass


_ERRORS = {1: InvalidArgumentError, 2: InteropError, 3: CudaError, 4: OutOfMemoryError, 5: ConfigError,
           6: PluginError}


class Cai(ctypes.Structure):
    """conveyor_cai_t"""
    _fields_ = [
        ("version", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("typestr", ctypes.c_char_p),
        ("data", ctypes.c_size_t),
        ("read_only", ctypes.c_int32),
        ("has_stream", ctypes.c_int32),
        ("stream", ctypes.c_int64),
        ("has_mask", ctypes.c_int32),
    ]


class TensorInfo(ctypes.Structure):
    """conveyor_tensor_info_t"""
    _fields_ = [
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("strides", ctypes.c_int64 * MAX_DIMS),
        ("dtype", ctypes.c_int),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("data", ctypes.c_void_p),
        ("read_only", ctypes.c_int32),
    ]


RELEASE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# conveyor_function_fn and conveyor_function_destroy_fn (python/conveyor/functions.py).
FUNCTION_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
DESTROY_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class CallDesc(ctypes.Structure):
    """conveyor_function_call_desc_t"""
    _fields_ = [
        ("num_inputs", ctypes.c_int32),
        ("num_outputs", ctypes.c_int32),
        ("num_samples", ctypes.c_int32),
        ("first_sample", ctypes.c_int32),
        ("batch_processing", ctypes.c_int32),
        ("iteration", ctypes.c_int64),
        ("node", ctypes.c_char_p),
        ("function", ctypes.c_char_p),
    ]


_P = ctypes.c_void_p
_I32 = ctypes.c_int32
_I64 = ctypes.c_int64
_STATUS = ctypes.c_int
_SIGNATURES = {
    "conveyor_abi_version": (ctypes.c_uint32, []),
    "conveyor_last_error": (ctypes.c_char_p, []),
    "conveyor_stream_create": (_STATUS, [_I32, ctypes.POINTER(_P)]),
    "conveyor_stream_code": (_STATUS, [_P, ctypes.POINTER(_I64)]),
    "conveyor_stream_synchronize": (_STATUS, [_P]),
    "conveyor_stream_destroy": (None, [_P]),
    "conveyor_tensor_from_dlpack_versioned": (_STATUS, [_P, _I64, ctypes.POINTER(_P)]),
    "conveyor_tensor_from_dlpack": (_STATUS, [_P, _I64, ctypes.POINTER(_P)]),
    "conveyor_tensor_from_cai": (_STATUS, [ctypes.POINTER(Cai), RELEASE_FN, _P, ctypes.POINTER(_P)]),
    "conveyor_tensor_empty": (_STATUS, [_I32, ctypes.POINTER(_I64), ctypes.c_int, _I32, _I32, _I64,
                                        ctypes.POINTER(_P)]),
    "conveyor_tensor_to_dlpack_versioned": (_STATUS, [_P, _I64, ctypes.POINTER(_P)]),
    "conveyor_tensor_to_dlpack": (_STATUS, [_P, _I64, ctypes.POINTER(_P)]),
    "conveyor_tensor_to_dlpack_versioned_on": (_STATUS, [_P, _I64, _I32, _I32, ctypes.POINTER(_P)]),
    "conveyor_tensor_to_dlpack_on": (_STATUS, [_P, _I64, _I32, _I32, ctypes.POINTER(_P)]),
    "conveyor_dlpack_versioned_delete": (None, [_P]),
    "conveyor_dlpack_delete": (None, [_P]),
    "conveyor_tensor_to_cai": (_STATUS, [_P, _I64, ctypes.POINTER(Cai)]),
    "conveyor_tensor_info": (_STATUS, [_P, ctypes.POINTER(TensorInfo)]),
    "conveyor_tensor_release": (None, [_P]),
    "conveyor_scale_add": (_STATUS, [_P, _P, ctypes.c_float, ctypes.c_float, _I64]),
    # Pipelines (conveyor_pipeline.h).
    "conveyor_pipeline_create_from_file": (_STATUS, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "conveyor_pipeline_create_from_string": (_STATUS, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "conveyor_pipeline_destroy": (None, [_P]),
    "conveyor_pipeline_build": (_STATUS, [_P]),
    "conveyor_pipeline_run": (_STATUS, [_P]),
    "conveyor_pipeline_epoch_size": (_STATUS, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "conveyor_pipeline_outputs": (_STATUS, [_P, ctypes.POINTER(_P)]),
    "conveyor_pipeline_checkpoint": (_STATUS, [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "conveyor_pipeline_stage_times": (_STATUS, [_P, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]),
    "conveyor_pipeline_skipped": (_STATUS, [_P, ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_size_t)]),
    "conveyor_pipeline_resume_from": (_STATUS, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "conveyor_pipeline_external_source_count": (_STATUS, [_P, ctypes.POINTER(_I32)]),
    "conveyor_pipeline_external_source_name": (_STATUS, [_P, _I32, ctypes.POINTER(ctypes.c_char_p)]),
    "conveyor_pipeline_feed_batch": (_STATUS, [_P, ctypes.c_char_p, _P]),
    "conveyor_pipeline_feed_samples": (_STATUS, [_P, ctypes.c_char_p, ctypes.POINTER(_P), _I32]),
    "conveyor_outputs_count": (_STATUS, [_P, ctypes.POINTER(_I32)]),
    "conveyor_outputs_name": (_STATUS, [_P, _I32, ctypes.POINTER(ctypes.c_char_p)]),
    "conveyor_outputs_index": (_STATUS, [_P, ctypes.c_char_p, ctypes.POINTER(_I32)]),
    "conveyor_outputs_iteration": (_STATUS, [_P, ctypes.POINTER(_I64)]),
    "conveyor_outputs_num_samples": (_STATUS, [_P, _I32, ctypes.POINTER(_I32)]),
    "conveyor_outputs_is_uniform": (_STATUS, [_P, _I32, ctypes.POINTER(_I32)]),
    "conveyor_outputs_get": (_STATUS, [_P, _I32, _I32, ctypes.POINTER(_P)]),
    "conveyor_outputs_get_padded": (_STATUS, [_P, _I32, ctypes.c_double, _I64, ctypes.POINTER(_P), ctypes.POINTER(_P),
                                              ctypes.POINTER(_P)]),
    "conveyor_outputs_wait": (_STATUS, [_P, _I64]),
    "conveyor_outputs_release": (None, [_P]),
    "conveyor_pipeline_next": (_STATUS, [_P, _I32, ctypes.POINTER(_P), ctypes.POINTER(TensorInfo),
                                         ctypes.POINTER(_I32), ctypes.POINTER(_P)]),
    # User functions (conveyor_function.h; python/conveyor/functions.py).
    "conveyor_register_function": (_STATUS, [ctypes.c_char_p, FUNCTION_FN, _P, DESTROY_FN]),
    "conveyor_unregister_function": (_STATUS, [ctypes.c_char_p]),
    "conveyor_registered_functions": (_STATUS, [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "conveyor_function_call_describe": (_STATUS, [_P, ctypes.POINTER(CallDesc)]),
    "conveyor_function_call_inputs": (_STATUS, [_P, _I32, ctypes.POINTER(TensorInfo)]),
    "conveyor_function_call_input_layout": (_STATUS, [_P, _I32, ctypes.POINTER(ctypes.c_char_p)]),
    "conveyor_function_call_output": (_STATUS, [_P, _I32, _I32, _I32, ctypes.POINTER(_I64), ctypes.c_int, ctypes.c_char_p,
                                                ctypes.POINTER(_P)]),
    "conveyor_function_call_set_error": (_STATUS, [_P, ctypes.c_char_p]),
}


def _candidates():
    env = os.environ.get("CONVEYOR_LIB")
    if env:
        return [env]
    return [os.path.join(os.path.dirname(os.path.abspath(__file__)), "libconveyor_c.so")]


def _load():
    tried = []
    for path in _candidates():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        lib = ctypes.CDLL(path)
        version = lib.conveyor_abi_version()
        if version != ABI_VERSION:
            raise ImportError("conveyor: %s has C ABI version %d, this package expects %d" %
                              (path, version, ABI_VERSION))
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        return lib, path
    raise ImportError("conveyor: cannot find libconveyor_c.so; tried " + ", ".join(tried) +
                      ". Set CONVEYOR_LIB to its path (bazel-bin/core/capi/libconveyor_c.so after "
                      "`bazel build //core/capi:libconveyor_c.so`).")


lib, path = _load()


def check(status):
    """Raises the Error subclass for a failed C call, with the library's thread-local message."""
    if status != OK:
        message = lib.conveyor_last_error().decode("utf-8", "replace")
        raise _ERRORS.get(status, Error)("%s: %s" % (STATUS_NAMES.get(status, "status %d" % status), message))
