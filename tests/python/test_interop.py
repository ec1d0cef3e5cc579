"""Conveyor's Python bridge against NumPy, PyTorch, CuPy, JAX and Numba.

Run from the repository root:
    CONVEYOR_LIB=bazel-bin/core/capi/libconveyor_c.so python3 -m pytest tests/python -v
Each library's tests skip with the reason when it is not importable or there is no GPU; the
NumPy (kDLCPU) and parsing tests need no GPU.
"""
import gc
import importlib
import sys
import weakref

import pytest

try:
    import conveyor
    from conveyor import _capsule
except ImportError as e:  # the shared library is missing: say how to point at it
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

N = 1 << 16
ALL_DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "bfloat16", "float32",
              "float64"]


def _import(name):
    try:
        return importlib.import_module(name)
    except Exception as e:  # ImportError, or a library that fails to initialise
        pytest.skip("%s is not importable: %s" % (name, e))


@pytest.fixture
def np():
    return _import("numpy")


@pytest.fixture
def cupy(gpu):
    cupy = _import("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        pytest.skip("cupy has no CUDA device: %s" % e)
    return cupy


@pytest.fixture
def jax(gpu):
    jax = _import("jax")
    _import("jax.dlpack")
    if not _jax_gpus(jax):
        pytest.skip("jax has no GPU backend (jax.devices('cuda') and jax.devices('gpu') are empty)")
    return jax


def _jax_gpus(jax):
    for platform in ("cuda", "gpu"):
        try:
            devices = jax.devices(platform)
        except Exception:
            continue
        if devices:
            return devices
    return []


@pytest.fixture
def numba_cuda(gpu):
    _import("numba")
    cuda = _import("numba.cuda")
    if not cuda.is_available():
        pytest.skip("numba.cuda reports no usable GPU")
    return cuda


def random_numpy(np, dtype, shape=(N,)):
    """Fresh random values, never zeros."""
    rng = np.random.default_rng()
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in ("float16", "float32", "float64", "bfloat16"):
        return rng.uniform(1.0, 100.0, size=shape).astype("float32" if dtype == "bfloat16" else dtype)
    info = np.iinfo(dtype)
    return rng.integers(1, min(int(info.max), 120), size=shape, endpoint=True).astype(dtype)


class CaiHolder:
    """A producer that offers only __cuda_array_interface__ (as PyCUDA and many others do)."""

    def __init__(self, cai, owner=None):
        self.__cuda_array_interface__ = cai
        self.owner = owner


# ---- CPU: NumPy (kDLCPU) and parsing, no GPU needed ---------------------------------------------

@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bfloat16"])
def test_numpy_round_trip_is_zero_copy(np, dtype):
    a = random_numpy(np, dtype, (37, 5))
    try:
        t = conveyor.as_tensor(a)
    except BufferError as e:
        if dtype != "bool":
            raise
        pytest.skip("this NumPy cannot export bool through DLPack: %s" % e)
    assert t.dtype == dtype
    assert t.shape == (37, 5) and t.strides == (5, 1)
    assert t.device == (1, 0)
    assert t.data_ptr == a.ctypes.data
    b = np.from_dlpack(t)
    assert b.ctypes.data == a.ctypes.data
    assert np.array_equal(a, b)


def test_numpy_strided_view_keeps_its_strides(np):
    a = random_numpy(np, "float64", (8, 6))
    view = a[::2, 1:]
    t = conveyor.as_tensor(view)
    assert t.shape == (4, 5)
    assert t.strides == (12, 1)
    assert t.data_ptr == view.ctypes.data
    assert np.array_equal(np.from_dlpack(t), view)


def test_numpy_producer_freed_while_we_hold_it(np):
    a = random_numpy(np, "float32", (1000,))
    expected = a.copy()
    alive = weakref.ref(a)
    t = conveyor.as_tensor(a)
    del a
    gc.collect()
    assert alive() is not None, "our import keeps the producer's memory alive"
    assert np.array_equal(np.from_dlpack(t), expected)
    del t
    gc.collect()
    assert alive() is None, "releasing our tensor releases the producer exactly once"


def test_unconsumed_capsules_free_their_tensor(np):
    a = random_numpy(np, "int32", (10,))
    alive = weakref.ref(a)
    t = conveyor.as_tensor(a)
    del a
    versioned = t.__dlpack__(max_version=(1, 0))
    legacy = t.__dlpack__()
    assert _capsule.name_of(versioned) == b"dltensor_versioned"
    assert _capsule.name_of(legacy) == b"dltensor"
    del t
    gc.collect()
    assert alive() is not None
    del versioned, legacy
    gc.collect()
    assert alive() is None


def test_raw_capsules_and_consumed_capsules(np):
    a = random_numpy(np, "float64", (3, 4))
    capsule = a.__dlpack__()  # legacy from every NumPy version
    t = conveyor.as_tensor(capsule)
    assert t.data_ptr == a.ctypes.data
    assert _capsule.name_of(capsule) == b"used_dltensor"
    with pytest.raises(conveyor.InteropError, match="already consumed"):
        conveyor.as_tensor(capsule)


def test_numpy_read_only_arrays_stay_read_only(np):
    a = random_numpy(np, "float32", (16,))
    a.flags.writeable = False
    try:
        t = conveyor.as_tensor(a)
    except BufferError as e:  # NumPy < 2.1 cannot say "read-only" and refuses
        pytest.skip("this NumPy cannot export read-only arrays: %s" % e)
    assert t.read_only
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()  # legacy DLPack cannot carry the flag: refused rather than made writable
    capsule = t.__dlpack__(max_version=(1, 0))
    assert _capsule.name_of(capsule) == b"dltensor_versioned"


def test_dlpack_arguments_are_checked(np):
    t = conveyor.as_tensor(random_numpy(np, "float32", (4,)))
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match=r"expected dl_device \(1, 0\)"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=True is not supported"):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="expected stream=None for a CPU tensor"):
        t.__dlpack__(stream=1)
    assert not hasattr(t, "__cuda_array_interface__")
    t.__dlpack__(dl_device=(1, 0), copy=False)


def test_producers_without_max_version_get_the_legacy_call(np):
    a = random_numpy(np, "int16", (5,))
    calls = []

    class OldProducer:
        def __dlpack__(self, stream=None):
            calls.append(stream)
            return a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    t = conveyor.as_tensor(OldProducer())
    assert calls == [None]
    assert t.data_ptr == a.ctypes.data


def test_producers_that_ignore_max_version_are_read_by_capsule_name(np):
    a = random_numpy(np, "uint8", (5,))

    class IgnoresMaxVersion:  # older JAX: accepts max_version, returns a legacy capsule anyway
        def __dlpack__(self, stream=None, max_version=None):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert conveyor.as_tensor(IgnoresMaxVersion()).data_ptr == a.ctypes.data


@pytest.mark.parametrize("change, message", [
    ({"mask": object()}, 'field "mask": expected None or absent, got a mask'),
    ({"version": 1}, 'field "version": expected 2 or 3, got 1'),
    ({"typestr": ">f4"}, 'typestr ">f4": big-endian data is not supported'),
    ({"typestr": "<c8"}, "expected kind b, i, u or f"),
    ({"stream": 0}, 'field "stream": expected None, 1 (legacy default), 2 (per-thread default) or a stream '
                    'handle, got 0 (disallowed by the spec)'),
    ({"strides": (6,)}, 'expected byte strides that are multiples of the item size 4 (<f4), got 6'),
])
def test_cuda_array_interface_errors_name_the_field(change, message):
    cai = {"shape": (4,), "typestr": "<f4", "data": (0x1000, False), "version": 3}
    cai.update(change)
    holder = CaiHolder(cai)
    before = sys.getrefcount(holder)
    text = None
    try:
        conveyor.as_tensor(holder)
    except conveyor.InteropError as e:
        text = str(e)  # the traceback (which references `holder`) dies with the except block
    assert text is not None and message in text, text
    assert sys.getrefcount(holder) == before, "a failed import releases the producer once"


def test_cuda_array_interface_missing_field():
    with pytest.raises(conveyor.InteropError, match="expected the required field 'typestr'"):
        conveyor.as_tensor(CaiHolder({"shape": (4,), "data": (0x1000, False), "version": 3}))


def test_as_tensor_rejects_other_objects():
    with pytest.raises(TypeError, match="expected an object with __dlpack__ or __cuda_array_interface__"):
        conveyor.as_tensor([1, 2, 3])


# ---- PyTorch ---------------------------------------------------------------------------------------

TORCH_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def torch_random(torch, np, dtype, shape=(N,)):
    host = torch.from_numpy(random_numpy(np, dtype, shape))
    if dtype == "bfloat16":
        host = host.to(torch.bfloat16)
    return host.to("cuda")


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_round_trip_is_zero_copy(torch, np, dtype):
    x = torch_random(torch, np, dtype)
    t = conveyor.as_tensor(x)
    assert t.dtype == dtype
    assert t.device == (2, x.device.index)
    assert t.data_ptr == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
    assert y.dtype == x.dtype
    assert torch.equal(y, x)


def test_torch_legacy_capsule_and_strided_view(torch, np):
    x = torch_random(torch, np, "float32", (64, 48))
    view = x.t()[3:, ::2]
    legacy = torch.utils.dlpack.to_dlpack(view)
    assert _capsule.name_of(legacy) == b"dltensor"
    t = conveyor.as_tensor(legacy)
    assert t.shape == tuple(view.shape)
    assert t.strides == tuple(view.stride())
    assert t.data_ptr == view.data_ptr()
    out = torch.full(tuple(view.shape), float("nan"), device="cuda")
    result = torch.from_dlpack(conveyor.scale_add(out, t, 2.0, -1.0))
    torch.testing.assert_close(result, view * 2 - 1)


def test_torch_scale_add_round_trip(torch, np):
    x = torch_random(torch, np, "float32")
    out = torch.full_like(x, float("nan"))  # poisoned: unwritten elements show
    result = torch.from_dlpack(conveyor.scale_add(out, x, 3.0, 0.5))
    assert result.data_ptr() == out.data_ptr()
    torch.testing.assert_close(result, x * 3.0 + 0.5)


def _sleep_cycles(torch):
    # About 200 ms at the clock rates of current data-centre GPUs: far longer than our launch.
    return int(4e8)


def test_torch_side_stream_with_pending_work_is_waited_for(torch, np):
    x = torch_random(torch, np, "float32")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(_sleep_cycles(torch))  # a long kernel ahead of the producer's result
        y = x * 3.0 + 1.0
        t = conveyor.as_tensor(y)  # __dlpack__(stream=ours): torch orders our stream after `side`
        out = conveyor.as_tensor(torch.full_like(y, float("nan")))
    result = torch.from_dlpack(conveyor.scale_add(out, t, 2.0, 0.0))
    torch.testing.assert_close(result, (x * 3.0 + 1.0) * 2.0)


def test_torch_side_stream_through_cuda_array_interface(torch, np):
    x = torch_random(torch, np, "float32")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(_sleep_cycles(torch))
        y = x * -2.0 + 5.0
    cai = dict(y.__cuda_array_interface__)
    cai.update(version=3, stream=side.cuda_stream)  # the producer's stream, still busy
    t = conveyor.as_tensor(CaiHolder(cai, owner=y))
    assert t.data_ptr == y.data_ptr()
    out = conveyor.as_tensor(torch.full_like(x, float("nan")))
    result = torch.from_dlpack(conveyor.scale_add(out, t, 1.0, 1.0))
    torch.testing.assert_close(result, x * -2.0 + 6.0)


def test_torch_cai_dict_with_stream_none(torch, np):
    x = torch_random(torch, np, "float32", (128, 3))
    torch.cuda.synchronize()
    cai = dict(x.__cuda_array_interface__)
    cai.update(version=3, stream=None)
    t = conveyor.as_tensor(CaiHolder(cai, owner=x))
    assert t.data_ptr == x.data_ptr() and t.shape == (128, 3)
    assert torch.equal(torch.from_dlpack(t), x)


def test_torch_pinned_tensor_is_read_by_our_kernel_through_the_mapped_address(torch, np):
    x = torch.from_numpy(random_numpy(np, "float32")).pin_memory()
    t = conveyor.as_tensor(x)
    assert t.device == (3, 0), "page-locked host memory imports as kDLCUDAHost"
    assert t.data_ptr == x.data_ptr()
    out = torch.full((N,), float("nan"), device="cuda")
    result = torch.from_dlpack(conveyor.scale_add(out, t, -1.0, 2.0))
    torch.testing.assert_close(result.cpu(), x * -1.0 + 2.0)


def test_torch_read_only_is_refused_for_writing(torch, np):
    x = torch_random(torch, np, "float32")
    cai = dict(x.__cuda_array_interface__)
    cai.update(data=(x.data_ptr(), True))
    read_only = conveyor.as_tensor(CaiHolder(cai, owner=x))
    assert read_only.read_only
    with pytest.raises(conveyor.InvalidArgumentError, match="out: expected a writable tensor, got a read-only one"):
        conveyor.scale_add(read_only, x, 1.0, 0.0)
    with pytest.raises(BufferError, match="read-only"):
        read_only.__dlpack__(stream=1)  # legacy capsules cannot carry the flag


def test_torch_producer_freed_while_we_hold_it(torch, np):
    x = torch_random(torch, np, "float32")
    expected = x.clone()
    t = conveyor.as_tensor(x)
    del x
    gc.collect()
    torch.cuda.empty_cache()
    reuse = torch.zeros(4 * N, device="cuda")  # would land on x's memory had it been freed
    torch.testing.assert_close(torch.from_dlpack(t), expected)
    del reuse


# ---- CuPy ------------------------------------------------------------------------------------------

CUPY_DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", CUPY_DTYPES)
def test_cupy_round_trip_is_zero_copy(cupy, np, dtype):
    x = cupy.asarray(random_numpy(np, dtype, (256, 3)))
    t = conveyor.as_tensor(x)
    assert t.dtype == dtype
    assert t.data_ptr == x.data.ptr
    y = cupy.from_dlpack(t)
    assert y.data.ptr == x.data.ptr
    assert bool((y == x).all())
    z = cupy.asarray(t)  # through __cuda_array_interface__
    assert z.data.ptr == x.data.ptr
    assert bool((z == x).all())


def test_cupy_cai_dict_with_stream_none(cupy, np):
    x = cupy.asarray(random_numpy(np, "float32"))
    cupy.cuda.Device().synchronize()
    cai = dict(x.__cuda_array_interface__)
    cai["stream"] = None  # what PyCUDA exports: no synchronisation needed
    t = conveyor.as_tensor(CaiHolder(cai, owner=x))
    assert t.data_ptr == x.data.ptr
    out = cupy.full(x.shape, cupy.nan, dtype=cupy.float32)
    result = cupy.from_dlpack(conveyor.scale_add(out, t, 2.0, 3.0))
    assert result.data.ptr == out.data.ptr
    cupy.testing.assert_allclose(result, x * 2.0 + 3.0)


def test_cupy_cai_producer_kept_alive_by_the_release_callback(cupy, np):
    x = cupy.asarray(random_numpy(np, "float32"))
    expected = cupy.asnumpy(x)
    cupy.cuda.Device().synchronize()
    holder = CaiHolder(dict(x.__cuda_array_interface__, stream=None), owner=x)
    alive = weakref.ref(holder)
    t = conveyor.as_tensor(holder)
    del holder, x
    gc.collect()
    assert alive() is not None, "our import holds the producer"
    cupy.get_default_memory_pool().free_all_blocks()
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(t)), expected)
    del t
    gc.collect()
    assert alive() is None, "released exactly when the last user let go"


# ---- JAX -------------------------------------------------------------------------------------------

JAX_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "float16", "bfloat16", "float32"]


def jax_random(jax, np, dtype, shape=(N,)):
    import jax.numpy as jnp
    host = random_numpy(np, dtype, shape)
    return jax.device_put(jnp.asarray(host, dtype=jnp.bfloat16 if dtype == "bfloat16" else host.dtype),
                          _jax_gpus(jax)[0])


@pytest.mark.parametrize("dtype", JAX_DTYPES)
def test_jax_in_and_out_is_zero_copy(jax, np, dtype):
    x = jax_random(jax, np, dtype, (128, 4))
    x.block_until_ready()
    t = conveyor.as_tensor(x)
    assert t.dtype == dtype
    assert t.data_ptr == x.unsafe_buffer_pointer()
    y = jax.dlpack.from_dlpack(t)
    assert y.unsafe_buffer_pointer() == t.data_ptr
    assert bool((y == x).all())


def test_jax_legacy_and_versioned_capsules(jax, np):
    x = jax_random(jax, np, "float32")
    x.block_until_ready()
    legacy = x.__dlpack__()
    assert _capsule.name_of(legacy) == b"dltensor"
    assert conveyor.as_tensor(legacy).data_ptr == x.unsafe_buffer_pointer()
    try:
        maybe_versioned = x.__dlpack__(max_version=(1, 0))
    except TypeError:
        pytest.skip("this JAX does not accept max_version")
    # Older JAX returns a legacy capsule anyway: the name decides how it is read.
    assert _capsule.name_of(maybe_versioned) in (b"dltensor_versioned", b"dltensor")
    assert conveyor.as_tensor(maybe_versioned).data_ptr == x.unsafe_buffer_pointer()


def test_jax_result_of_our_op(jax, np):
    x = jax_random(jax, np, "float32")
    out = conveyor.empty((N,), "float32", device="cuda")
    result = conveyor.scale_add(out, x, 0.5, -4.0)
    y = jax.dlpack.from_dlpack(result)
    assert y.unsafe_buffer_pointer() == out.data_ptr
    np.testing.assert_allclose(np.asarray(y), np.asarray(x) * 0.5 - 4.0, rtol=1e-6)


# ---- Numba -----------------------------------------------------------------------------------------

NUMBA_DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", NUMBA_DTYPES)
def test_numba_in_and_out_is_zero_copy(numba_cuda, np, dtype):
    host = random_numpy(np, dtype, (64, 5))
    stream = numba_cuda.stream()
    d = numba_cuda.to_device(host, stream=stream)  # CAI v3 with numba's stream
    t = conveyor.as_tensor(d)
    assert t.dtype == dtype
    assert t.data_ptr == d.device_ctypes_pointer.value
    back = numba_cuda.as_cuda_array(t)
    assert back.device_ctypes_pointer.value == t.data_ptr
    np.testing.assert_array_equal(back.copy_to_host(), host)


def test_numba_result_of_our_op(numba_cuda, np):
    host = random_numpy(np, "float32")
    d = numba_cuda.to_device(host, stream=numba_cuda.stream())  # the CAI names that stream
    out = conveyor.empty((N,), "float32", device="cuda")
    result = conveyor.scale_add(out, d, 4.0, 1.0)
    np.testing.assert_allclose(numba_cuda.as_cuda_array(result).copy_to_host(), host * 4.0 + 1.0, rtol=1e-6)
