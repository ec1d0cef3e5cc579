"""User functions for `python_function` nodes (docs/python.md, "User functions").

    @conveyor.register_function("double")          # or conveyor.register_function("double", fn)
    def double(images):                              # batch_processing (default): lists of arrays
        return [2 * x for x in images]

    pipe = conveyor.Pipeline("train.yaml")           # a node: {op: python_function, args: {function: double}}

Registration is process-wide, by name, through the C API (conveyor_register_function). A node binds
its function when its pipeline is built and keeps it until the pipeline is closed: registering the
name again, or unregister_function, affects only pipelines built later. This module keeps the
function (and the C callback wrapping it) alive as long as any registration or built pipeline uses
it, so `del fn` after registering changes nothing.

Calls come from the pipeline's CPU-stage threads, which take the GIL for the call (ctypes does;
every Conveyor call made from Python releases it, so a thread waiting in next(pipe) never blocks a
call). Inputs are read-only NumPy views of the pipeline's host buffers, valid during the call only:
copy what you keep. Outputs: NumPy arrays, or anything np.from_dlpack / np.asarray takes (a CPU
torch tensor); copied into the pipeline.
"""
import atexit
import ctypes
import itertools
import traceback
import weakref

from . import _lib
from ._lib import check, lib

# conveyor_dtype_t codes of the NumPy dtypes Conveyor has (bfloat16: none in NumPy).
_CODES = {name: code for code, name in enumerate(_lib.DTYPES) if name != "bfloat16"}

_live = {}  # token (the C user_data) -> _Registration, until the C side lets go (destroy)
_tokens = itertools.count(1)
_pipelines = weakref.WeakSet()  # open pipelines built while Python functions were registered


def _forget(token):
    _live.pop(token, None)


_DESTROY = _lib.DESTROY_FN(_forget)  # module-level, never freed: C may call it until the process ends


def _numpy():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is a dependency of user functions only
        raise ImportError("conveyor: python_function nodes need NumPy (%s)" % e)
    return numpy


class _Registration:
    """One registered function and the C callback that calls it."""

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn
        self.c_fn = _lib.FUNCTION_FN(self._call)

    def _call(self, call, _user_data):
        # Nothing may escape a ctypes callback: every failure becomes the node's error, with its
        # traceback (conveyor_function_call_set_error), and a non-zero status.
        try:
            self._run(call)
            return 0
        except BaseException as e:  # noqa: B902 - KeyboardInterrupt too: the node must fail, not succeed
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip("\n")
            lib.conveyor_function_call_set_error(call, text.encode("utf-8", "replace"))
            return 1

    def _run(self, call):
        np = _numpy()
        desc = _lib.CallDesc()
        check(lib.conveyor_function_call_describe(call, ctypes.byref(desc)))
        n = desc.num_samples
        infos = (_lib.TensorInfo * max(n, 1))()
        inputs = []
        for i in range(desc.num_inputs):
            check(lib.conveyor_function_call_inputs(call, i, infos))
            inputs.append([_input_view(np, infos[s], i, desc.first_sample + s) for s in range(n)])
        if desc.batch_processing:
            result = self.fn(*inputs)
        else:
            result = self.fn(*[samples[0] for samples in inputs])
        for o, value in enumerate(_per_output(result, desc.num_outputs)):
            samples = _per_sample(np, value, n, o) if desc.batch_processing else [value]
            for s, sample in enumerate(samples):
                _set_output(np, call, o, s, sample, desc.first_sample + s)


def _input_view(np, info, input_index, sample):
    name = _lib.DTYPES[info.dtype]
    if name not in _CODES:
        raise TypeError("input %d of sample %d: %s has no NumPy dtype; cast it first (op: cast)" %
                        (input_index, sample, name))
    shape = tuple(info.shape[d] for d in range(info.ndim))
    nbytes = _lib.ITEMSIZE[name]
    for extent in shape:
        nbytes *= extent
    if nbytes == 0 or not info.data:
        array = np.empty(shape, dtype=name)
    else:
        array = np.frombuffer((ctypes.c_char * nbytes).from_address(info.data), dtype=name).reshape(shape)
    array.flags.writeable = False  # the producer's output: other nodes read it too
    return array


def _per_output(result, num_outputs):
    if num_outputs == 1:
        return [result]
    if not isinstance(result, (tuple, list)) or len(result) != num_outputs:
        got = "a %s of %d" % (type(result).__name__, len(result)) if isinstance(result, (tuple, list)) else \
            type(result).__name__
        raise ValueError("expected a tuple of %d outputs (num_outputs: %d), got %s" % (num_outputs, num_outputs, got))
    return list(result)


def _per_sample(np, value, n, output):
    if isinstance(value, (list, tuple)):
        samples = list(value)
    else:
        array = _host_array(np, value, "output %d" % output)
        samples = [array[s] for s in range(array.shape[0])] if array.ndim > 0 else None
        if samples is None:
            raise ValueError("output %d: expected %d samples (a list of arrays, or an array whose first dimension "
                             "is the batch), got a 0-d array" % (output, n))
    if len(samples) != n:
        raise ValueError("output %d: expected %d samples (a list of arrays, or an array whose first dimension is "
                         "the batch), got %d" % (output, n, len(samples)))
    return samples


def _host_array(np, value, where):
    if isinstance(value, np.ndarray):
        return value
    if value is None:
        raise TypeError("%s: expected an array, got None (does the function return its result?)" % where)
    device = getattr(value, "__dlpack_device__", None)
    if device is not None:
        device_type, device_id = device()
        if device_type not in (_lib.DEVICE_CPU, _lib.DEVICE_CUDA_HOST):
            raise TypeError("%s: expected a host array (NumPy, a CPU torch tensor), got one on DLPack device (%d, %d);"
                            " move it to the host first (torch: .cpu())" % (where, device_type, device_id))
        if hasattr(np, "from_dlpack"):
            try:
                return np.from_dlpack(value)
            except (TypeError, BufferError, RuntimeError, ValueError):
                pass  # e.g. a tensor that requires grad: np.asarray below says why
    return np.asarray(value)


def _set_output(np, call, output, sample, value, batch_index):
    where = "output %d of sample %d" % (output, batch_index)
    array = _host_array(np, value, where)
    code = _CODES.get(array.dtype.name)
    if code is None or array.dtype.byteorder == ">":
        got = array.dtype.str if array.dtype.byteorder == ">" else array.dtype.name
        raise TypeError("%s: expected one of %s, got %s" % (where, ", ".join(_CODES), got))
    array = np.ascontiguousarray(array)
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    data = ctypes.c_void_p()
    check(lib.conveyor_function_call_output(call, output, sample, array.ndim, shape, code, None, ctypes.byref(data)))
    if array.nbytes:
        ctypes.memmove(data, array.ctypes.data, array.nbytes)


def register_function(name, fn=None):
    """Registers `fn` under `name` for python_function nodes of pipelines built from now on
    (replacing an earlier function of that name for them). Returns `fn`; without `fn`, a decorator.

    fn's signature: with batch_processing (default) fn(*inputs) gets one list of per-sample NumPy
    arrays per input and returns, per output, a list of arrays (or one array whose first dimension
    is the batch) — a tuple of those when num_outputs > 1. With batch_processing: false it gets one
    array per input and returns an array (a tuple when num_outputs > 1).
    """
    if fn is None:
        return lambda f: register_function(name, f)
    if not callable(fn):
        raise TypeError("register_function: expected a callable, got %s" % type(fn).__name__)
    registration = _Registration(str(name), fn)
    token = next(_tokens)
    _live[token] = registration
    # On failure the library runs _DESTROY(token) before returning, which forgets it again.
    check(lib.conveyor_register_function(str(name).encode("utf-8"), registration.c_fn, token, _DESTROY))
    return fn


def unregister_function(name):
    """Removes the registration of `name`: pipelines built later no longer find it; built ones keep
    their function until closed."""
    check(lib.conveyor_unregister_function(str(name).encode("utf-8")))


def registered_functions():
    """The registered names (from Python or C), sorted."""
    size = ctypes.c_size_t()
    check(lib.conveyor_registered_functions(None, 0, ctypes.byref(size)))
    buf = ctypes.create_string_buffer(size.value + 1)
    check(lib.conveyor_registered_functions(buf, size.value + 1, ctypes.byref(size)))
    return buf.raw[:size.value].decode("utf-8", "replace").splitlines()


def _track(pipeline):
    """Called by Pipeline.build: a pipeline that may call Python is closed at exit, before the
    interpreter (and the callbacks' GIL) goes away."""
    if _live:
        _pipelines.add(pipeline)


@atexit.register
def _close_pipelines():
    for pipeline in list(_pipelines):
        pipeline.close()
