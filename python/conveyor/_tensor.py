"""conveyor.Tensor, as_tensor and the demonstrator op, over the C API."""
import ctypes
import threading

from . import _capsule
from . import _lib
from ._lib import check, lib

# The DLPack minor version we ask producers for (our C core speaks 1.x).
_DLPACK_MAX_VERSION = (1, 1)


class Stream:
    """A non-blocking CUDA stream owned by Conveyor. `handle` is its cudaStream_t as an int, the
    value the DLPack and CUDA Array Interface protocols exchange."""

    def __init__(self, device=0):
        self._ptr = ctypes.c_void_p()
        check(lib.conveyor_stream_create(device, ctypes.byref(self._ptr)))
        code = ctypes.c_int64()
        check(lib.conveyor_stream_code(self._ptr, ctypes.byref(code)))
        self.handle = code.value
        self.device = device

    def synchronize(self):
        check(lib.conveyor_stream_synchronize(self._ptr))

    @classmethod
    def _adopt(cls, ptr, info):
        """A tensor of handle `ptr` whose conveyor_tensor_info is already known (no C call)."""
        t = cls.__new__(cls)
        t._ptr = ptr
        t._info = info
        return t

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and lib is not None:
            lib.conveyor_stream_destroy(ptr)

    def __repr__(self):
        return "conveyor.Stream(device=%d, handle=0x%x)" % (self.device, self.handle)


_default_streams = {}
_default_streams_lock = threading.Lock()


def default_stream(device=0):
    """The stream Conveyor uses on `device` when none is given (made on first use)."""
    with _default_streams_lock:
        stream = _default_streams.get(device)
        if stream is None:
            stream = _default_streams[device] = Stream(device)
        return stream


def stream_code(stream):
    """An interop stream code from an int, a conveyor.Stream, a torch.cuda.Stream (.cuda_stream) or
    a cupy stream (.ptr)."""
    if isinstance(stream, Stream):
        return stream.handle
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            # A library's default (NULL) stream means the legacy default stream: interop code 1.
            return value if value != 0 else 1
        if isinstance(value, ctypes.c_void_p):
            return value.value or 1
    raise TypeError("stream: expected None, an int, a conveyor.Stream or a CUDA stream object, got %r" %
                    type(stream).__name__)


class Tensor:
    """A zero-copy view of memory that Conveyor made or imported.

    Exports through __dlpack__ (versioned or legacy) and __cuda_array_interface__ (v3); whatever
    it imported stays alive while this tensor or any export of it lives.
    """

    __slots__ = ("_ptr", "_info", "__weakref__")

    def __init__(self, ptr):
        self._ptr = ptr
        info = _lib.TensorInfo()
        check(lib.conveyor_tensor_info(ptr, ctypes.byref(info)))
        self._info = info

    @classmethod
    def _adopt(cls, ptr, info):
        """A tensor of handle `ptr` whose conveyor_tensor_info is already known (no C call)."""
        t = cls.__new__(cls)
        t._ptr = ptr
        t._info = info
        return t

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and lib is not None:
            lib.conveyor_tensor_release(ptr)

    # ---- description ---------------------------------------------------------------------------
    @property
    def shape(self):
        return tuple(self._info.shape[i] for i in range(self._info.ndim))

    @property
    def strides(self):
        """In elements."""
        return tuple(self._info.strides[i] for i in range(self._info.ndim))

    @property
    def ndim(self):
        return self._info.ndim

    @property
    def dtype(self):
        return _lib.DTYPES[self._info.dtype]

    @property
    def itemsize(self):
        return _lib.ITEMSIZE[self.dtype]

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def device(self):
        """(DLPack device type, device id): (1, 0) CPU, (2, n) CUDA, (3, 0) pinned, (13, 0) managed."""
        return (self._info.device_type, self._info.device_id)

    @property
    def data_ptr(self):
        """Address of the first element (host address for CPU and pinned memory)."""
        return self._info.data or 0

    @property
    def read_only(self):
        return bool(self._info.read_only)

    def __repr__(self):
        return "conveyor.Tensor(shape=%s, dtype=%s, device=%s%s)" % (
            self.shape, self.dtype, self.device, ", read_only" if self.read_only else "")

    # ---- DLPack --------------------------------------------------------------------------------
    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export. dl_device=(1, 0) (kDLCPU) exports pinned memory as CPU memory, which it
        is (PyTorch and NumPy refuse kDLCUDAHost); the host then waits for pending GPU writes."""
        device = self.device
        pinned = device[0] == _lib.DEVICE_CUDA_HOST
        as_host = False
        if dl_device is not None:
            wanted = tuple(int(v) for v in dl_device)
            if pinned and wanted == (_lib.DEVICE_CPU, 0):
                as_host = True
            elif wanted != device:
                raise BufferError("__dlpack__: expected dl_device %s (where the data lives)%s or None, got %s; "
                                  "Conveyor exports without copying" %
                                  (device, ", (1, 0) (kDLCPU: pinned memory is host memory)" if pinned else "",
                                   wanted))
        if copy:
            raise BufferError("__dlpack__: copy=True is not supported; Conveyor exports zero-copy only "
                              "(pass copy=None or False)")
        if device[0] == _lib.DEVICE_CPU or as_host:
            if stream is not None:
                raise BufferError("__dlpack__: expected stream=None for a CPU %s, got %r" %
                                  ("consumer" if as_host else "tensor", stream))
            code = -1
        else:
            code = 1 if stream is None else stream_code(stream)  # None: the legacy default stream
        versioned = max_version is not None and int(max_version[0]) >= 1
        out = ctypes.c_void_p()
        if as_host:
            export = lib.conveyor_tensor_to_dlpack_versioned_on if versioned else lib.conveyor_tensor_to_dlpack_on
            check(export(self._ptr, code, _lib.DEVICE_CPU, 0, ctypes.byref(out)))
        elif versioned:
            check(lib.conveyor_tensor_to_dlpack_versioned(self._ptr, code, ctypes.byref(out)))
        else:
            check(lib.conveyor_tensor_to_dlpack(self._ptr, code, ctypes.byref(out)))
        try:
            return _capsule.make(out.value, versioned)
        except BaseException:
            (lib.conveyor_dlpack_versioned_delete if versioned else lib.conveyor_dlpack_delete)(out.value)
            raise

    # ---- CUDA Array Interface ------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self):
        device_type, device_id = self.device
        if device_type == _lib.DEVICE_CPU:
            # AttributeError, so hasattr() says "not a CUDA array" to consumers that probe.
            raise AttributeError("__cuda_array_interface__: pageable host memory is not device-accessible")
        stream = default_stream(device_id if device_type == _lib.DEVICE_CUDA else 0)
        cai = _lib.Cai()
        check(lib.conveyor_tensor_to_cai(self._ptr, stream.handle, ctypes.byref(cai)))
        return {
            "shape": tuple(cai.shape[i] for i in range(cai.ndim)),
            "typestr": cai.typestr.decode(),
            "data": (cai.data, bool(cai.read_only)),
            "version": cai.version,
            "strides": tuple(cai.strides[i] for i in range(cai.ndim)),
            "descr": [("", cai.typestr.decode())],
            "stream": cai.stream if cai.has_stream else None,
        }


class HostView:
    """A pinned tensor offered to a consumer as CPU memory (DLPack kDLCPU): for consumers that
    refuse kDLCUDAHost and cannot ask for dl_device themselves (torch.from_dlpack before `device=`).
    Exporting waits on the host for pending GPU writes."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack_device__(self):
        return (_lib.DEVICE_CPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.tensor.__dlpack__(stream=stream, max_version=max_version, dl_device=(_lib.DEVICE_CPU, 0),
                                      copy=copy)


def _from_capsule(capsule, ready_stream):
    pointer, versioned = _capsule.take(capsule)
    out = ctypes.c_void_p()
    # The C API owns the managed tensor from here, in success and failure alike.
    if versioned:
        check(lib.conveyor_tensor_from_dlpack_versioned(pointer, ready_stream, ctypes.byref(out)))
    else:
        check(lib.conveyor_tensor_from_dlpack(pointer, ready_stream, ctypes.byref(out)))
    return Tensor(out)


def _int_tuple(value, field):
    try:
        return tuple(int(v) for v in value)
    except TypeError:
        raise _lib.InteropError("CUDA Array Interface field %r: expected a tuple of ints, got %r" %
                                (field, value)) from None


def _from_cai(obj, cai):
    if not isinstance(cai, dict):
        raise _lib.InteropError("__cuda_array_interface__: expected a dict, got %s" % type(cai).__name__)
    for key in ("shape", "typestr", "data", "version"):
        if key not in cai:
            raise _lib.InteropError("CUDA Array Interface: expected the required field %r, which is missing "
                                    "(fields present: %s)" % (key, ", ".join(sorted(cai))))
    shape = _int_tuple(cai["shape"], "shape")
    strides = cai.get("strides")
    strides = None if strides is None else _int_tuple(strides, "strides")
    if strides is not None and len(strides) != len(shape):
        raise _lib.InteropError("CUDA Array Interface field 'strides': expected %d byte strides, got %d" %
                                (len(shape), len(strides)))
    data = cai["data"]
    if not (isinstance(data, tuple) and len(data) == 2):
        raise _lib.InteropError("CUDA Array Interface field 'data': expected (pointer, read_only), got %r" %
                                (data,))
    typestr = cai["typestr"]
    if not isinstance(typestr, str):
        raise _lib.InteropError("CUDA Array Interface field 'typestr': expected a str, got %r" % (typestr,))
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*strides) if strides is not None else None
    fields = _lib.Cai()
    fields.version = int(cai["version"])
    fields.ndim = ndim
    fields.shape = shape_array
    fields.strides = strides_array
    fields.typestr = typestr.encode()
    fields.data = int(data[0] or 0)
    fields.read_only = 1 if data[1] else 0
    stream = cai.get("stream")
    fields.has_stream = 0 if stream is None else 1
    fields.stream = 0 if stream is None else int(stream)
    fields.has_mask = 0 if cai.get("mask") is None else 1
    out = ctypes.c_void_p()
    # The producer object stays alive until Conveyor releases the memory (once, even on failure).
    context = _capsule.keep_alive(obj)
    check(lib.conveyor_tensor_from_cai(ctypes.byref(fields), _capsule.release_object, context, ctypes.byref(out)))
    return Tensor(out)


def as_tensor(obj, stream=None):
    """A zero-copy conveyor.Tensor of `obj`.

    Accepts anything with __dlpack__ (asked for a versioned capsule, falling back to the legacy
    call on TypeError; the capsule's actual name decides how it is read), anything with
    __cuda_array_interface__ (v2/v3; `stream` None is accepted and means no synchronisation), or a
    raw DLPack capsule. `stream` is where Conveyor will use the data (default: Conveyor's stream on
    that device); the producer is asked to make its data ready there.
    """
    if isinstance(obj, Tensor):
        return obj
    if _capsule.is_capsule(obj):
        return _from_capsule(obj, -1 if stream is None else stream_code(stream))
    if hasattr(obj, "__dlpack__"):
        device_type, device_id = (int(v) for v in obj.__dlpack_device__())
        if device_type in (_lib.DEVICE_CPU, _lib.DEVICE_CUDA_HOST):
            # Host data, pinned included: the protocol passes no stream (PyTorch rejects one for a
            # pinned tensor, which it reports as kDLCUDAHost).
            arg, ready = None, -1
        else:
            s = stream if stream is not None else default_stream(device_id if device_type == _lib.DEVICE_CUDA else 0)
            arg = ready = stream_code(s)
        try:
            capsule = obj.__dlpack__(stream=arg, max_version=_DLPACK_MAX_VERSION)
        except TypeError:  # producers before DLPack 1.0 do not know max_version
            capsule = None
        if capsule is None:
            capsule = obj.__dlpack__(stream=arg)
        return _from_capsule(capsule, ready)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(obj, cai)
    raise TypeError("as_tensor: expected an object with __dlpack__ or __cuda_array_interface__, or a DLPack "
                    "capsule, got %s" % type(obj).__name__)


def empty(shape, dtype="float32", device="cuda", device_id=0, stream=None):
    """An uninitialised contiguous tensor. device: "cpu", "cuda", "pinned" or "managed"."""
    kinds = {"cpu": _lib.DEVICE_CPU, "cuda": _lib.DEVICE_CUDA, "pinned": _lib.DEVICE_CUDA_HOST,
             "managed": _lib.DEVICE_CUDA_MANAGED}
    if device not in kinds:
        raise ValueError("empty: expected device 'cpu', 'cuda', 'pinned' or 'managed', got %r" % (device,))
    if dtype not in _lib.DTYPES:
        raise ValueError("empty: expected dtype one of %s, got %r" % (", ".join(_lib.DTYPES), dtype))
    shape = tuple(int(d) for d in shape)
    code = -1 if stream is None else stream_code(stream)
    out = ctypes.c_void_p()
    check(lib.conveyor_tensor_empty(len(shape), (ctypes.c_int64 * max(len(shape), 1))(*shape),
                                    _lib.DTYPES.index(dtype), kinds[device], device_id, code, ctypes.byref(out)))
    return Tensor(out)


def scale_add(out, x, a, b, stream=None):
    """out = a * x + b for float32 tensors in device-accessible memory, on `stream` (default:
    Conveyor's stream on out's device). Returns `out`."""
    out_t, x_t = as_tensor(out, stream), as_tensor(x, stream)
    if stream is None:
        device_type, device_id = out_t.device
        stream = default_stream(device_id if device_type == _lib.DEVICE_CUDA else 0)
    check(lib.conveyor_scale_add(out_t._ptr, x_t._ptr, float(a), float(b), stream_code(stream)))
    return out_t
