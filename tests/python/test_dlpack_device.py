"""__dlpack__(dl_device=...): a consumer that asks for (kDLCPU, 0) gets pinned memory as CPU memory
(issue 15: torch.from_dlpack refuses kDLCUDAHost). The CPU-tensor checks run anywhere; pinned
memory needs a GPU (the tests skip with the reason otherwise); the torch test needs torch."""
import ctypes
import inspect

import pytest

try:
    import conveyor
except Exception as e:  # the library is missing or fails to load: say so instead of erroring
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)


@pytest.fixture
def np():
    try:
        import numpy
    except ImportError as e:
        pytest.skip("numpy is not importable: %s" % e)
    return numpy


# Puts a consumer's dl_device=(1, 0) request to the tensor, as `numpy.from_dlpack(x, device="cpu")`
# and `torch.from_dlpack(x, device="cpu")` do in releases that have `device`.
AsCpu = conveyor._tensor.HostView


def pinned_from(np, values):
    values = np.ascontiguousarray(values)
    t = conveyor.empty(values.shape, str(values.dtype), device="pinned")
    ctypes.memmove(t.data_ptr, values.ctypes.data, values.nbytes)
    return t


def test_cpu_tensor_accepts_its_own_device_and_refuses_others(np):
    a = np.random.default_rng().standard_normal(37).astype(np.float32)
    t = conveyor.as_tensor(a)
    assert t.device == (1, 0)
    assert np.array_equal(np.from_dlpack(AsCpu(t)), a)
    for versioned in (None, (1, 0)):
        t.__dlpack__(dl_device=(1, 0), max_version=versioned)
    with pytest.raises(BufferError, match=r"expected dl_device \(1, 0\) \(where the data lives\) or None, got \(3, 0\)"):
        t.__dlpack__(dl_device=(3, 0))


def test_pinned_memory_is_exported_as_cpu_memory_when_asked(gpu, np):
    a = np.random.default_rng().standard_normal((6, 11)).astype(np.float32)
    t = pinned_from(np, a)
    assert t.device == (3, 0)
    for versioned in (None, (1, 0)):
        view = np.from_dlpack(AsCpu(t))
        assert view.ctypes.data == t.data_ptr  # the same host address: zero-copy
        assert np.array_equal(view, a)
        capsule = t.__dlpack__(dl_device=(1, 0), max_version=versioned)
        # Re-imported, CUDA says the address is page-locked: it is pinned again, same address.
        back = conveyor.as_tensor(capsule)
        assert back.device == (3, 0) and back.data_ptr == t.data_ptr


def test_pending_gpu_writes_are_finished_before_a_cpu_consumer_reads(gpu, np):
    rng = np.random.default_rng()
    for n in (1, 1000, 250_000):
        x = pinned_from(np, rng.standard_normal(n).astype(np.float32))
        out = pinned_from(np, np.full(n, np.nan, dtype=np.float32))
        stream = conveyor.Stream()
        conveyor.scale_add(out, x, 3.0, -0.5, stream=stream)  # queued, not waited for
        got = np.from_dlpack(AsCpu(out))  # the export waits on the host: no stream for a CPU reader
        want = np.from_dlpack(AsCpu(x)) * np.float32(3.0) - np.float32(0.5)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_pinned_refuses_other_devices_and_streams(gpu):
    t = conveyor.empty((4,), "float32", device="pinned")
    with pytest.raises(BufferError, match=r"expected dl_device \(3, 0\) \(where the data lives\), \(1, 0\)"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match=r"expected stream=None for a CPU consumer, got 1"):
        t.__dlpack__(dl_device=(1, 0), stream=1)


def test_torch_reads_pinned_memory_as_a_cpu_tensor(torch, np):
    a = np.random.default_rng().standard_normal(513).astype(np.float32)
    t = pinned_from(np, a)
    y = torch.from_dlpack(AsCpu(t))
    assert y.device.type == "cpu" and y.data_ptr() == t.data_ptr
    assert np.array_equal(y.numpy(), a)
    assert conveyor.HostView is AsCpu  # the public name users are pointed to
    if "device" not in inspect.signature(torch.from_dlpack).parameters:
        return  # older torch: no way to ask; the HostView wrapper above is what it would do
    # torch (2.11 measured) turns __dlpack_device__'s kDLCUDAHost into a torch device before it asks
    # for dl_device, and refuses it: HostView (or the Loader, which uses it) is the way for torch.
    # A torch that asks instead gets the memory as kDLCPU, zero-copy.
    try:
        z = torch.from_dlpack(t, device="cpu")
    except BufferError as e:
        assert "device_type: 3" in str(e), e
    else:
        assert z.device.type == "cpu" and z.data_ptr() == t.data_ptr


def test_torch_loader_yields_pinned_outputs_as_cpu_tensors(torch, np):
    from conveyor.torch import Loader
    # `u` feeds a GPU node, so the executor writes it into pinned staging: a pinned output.
    pipe = conveyor.Pipeline.from_yaml(
        "pipeline: {batch_size: 4, device: gpu, prefetch_depth: 2, seed: 5}\n"
        "ops:\n"
        "  - {op: random.uniform, name: u, args: {shape: [16]}, outputs: [u]}\n"
        "  - {op: copy, name: c, device: gpu, inputs: [u], outputs: [c]}\n"
        "outputs: [u, c]\n")
    batches = 0
    for (batch,) in Loader(pipe, ["u", "c"]):  # one dict per pipeline, as DALI's iterator
        assert batch["u"].device.type == "cpu" and batch["c"].device.type == "cuda"
        assert torch.equal(batch["u"], batch["c"].cpu())
        batches += 1
        if batches == 3:
            break
