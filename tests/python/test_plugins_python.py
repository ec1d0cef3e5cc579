"""Plugins through the C API: a pipeline created from Python (libconveyor_c.so, opened RTLD_LOCAL by
ctypes) loads the operator plugins it lists, as test binaries do.

The example plugin (//tests/plugins:libexample_scale.so, "example.scale": out = in * factor + bias)
and the broken plugins are found next to the library under test: bazel-bin/tests/plugins when
CONVEYOR_LIB is bazel-bin/core/capi/libconveyor_c.so (CI), or the plugin test's runfiles in the GPU
bundle; $CONVEYOR_PLUGIN_DIR overrides. Without them the tests skip and say where they looked.
"""
import ctypes
import glob
import os

import pytest

try:
    import conveyor
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")


def _plugin_dir():
    here = os.path.dirname(os.path.abspath(conveyor.library_path))
    candidates = [os.environ.get("CONVEYOR_PLUGIN_DIR"),
                  os.path.join(here, "..", "..", "tests", "plugins"),  # bazel-bin/core/capi -> bazel-bin
                  *glob.glob(os.path.join(here, "tests", "*plugin_test.runfiles", "conveyor", "tests", "plugins"))]
    for d in candidates:
        if d and os.path.exists(os.path.join(d, "libexample_scale.so")):
            return os.path.abspath(d)
    pytest.skip("libexample_scale.so not found (build //tests/plugins:libexample_scale.so); looked in " +
                ", ".join(os.path.abspath(d) for d in candidates if d))


@pytest.fixture(scope="module")
def plugin_dir():
    return _plugin_dir()


def yaml(plugin, device="cpu", bias=0.5, batch=3, extra_ops="", factor="$factors"):
    # The pipeline's device too: on a CPU pipeline a node asking for the GPU falls back to the CPU.
    return ("pipeline: {name: plugin_py, batch_size: %d, device: %s, num_threads: 2, prefetch_depth: 2, "
            "seed: 11}\n"
            "plugins: [%s]\n"
            "ops:\n"
            "  - {op: random.uniform, name: src, args: {range: [-4.0, 4.0], shape: [6]}, outputs: [values]}\n"
            "  - {op: random.uniform, name: f, args: {range: [1.0, 2.0]}, outputs: [factors]}\n"
            "%s"
            "  - {op: example.scale, name: scaler, device: %s, inputs: [values], args: {factor: %s, bias: %s}, "
            "outputs: [scaled]}\n"
            "outputs: [values, factors, scaled]\n" % (batch, device, plugin, extra_ops, device, factor, bias))


def expected(values, factors, bias):
    # The plugin computes fma(v, f, b) in float32; double precision then one rounding is within an ulp.
    return (values.astype(np.float64) * factors.astype(np.float64)[:, None] + bias).astype(np.float32)


def test_library_exports_the_plugin_abi_but_not_cudart():
    lib = ctypes.CDLL(conveyor.library_path)
    # What plugins leave undefined (vtable and typeinfo of conveyor::Operator, the registrar).
    for symbol in ("_ZTVN8conveyor8OperatorE", "_ZTIN8conveyor8OperatorE", "conveyor_pipeline_create_from_file"):
        assert hasattr(lib, symbol), symbol + " is not exported by " + conveyor.library_path
    # The static cudart stays private: torch, CuPy and JAX bring their own.
    for symbol in ("cudaMalloc", "cudaStreamCreate", "cudaGetLastError"):
        assert not hasattr(lib, symbol), symbol + " leaks out of " + conveyor.library_path


def test_cpu_plugin_from_python_computes_scale(plugin_dir):
    pipe = conveyor.Pipeline(yaml(os.path.join(plugin_dir, "libexample_scale.so"))).build()
    seen = []
    for _ in range(3):
        batch = pipe.outputs()
        values, factors = np.from_dlpack(batch["values"]), np.from_dlpack(batch["factors"])
        scaled = np.from_dlpack(batch["scaled"])
        assert scaled.shape == (3, 6) and scaled.dtype == np.float32
        assert ((factors >= 1) & (factors < 2)).all()
        np.testing.assert_allclose(scaled, expected(values, factors, 0.5), rtol=1e-6, atol=1e-6)
        seen.append(values.copy())
        del batch
        pipe.run()
    assert not np.array_equal(seen[0], seen[1]), "each iteration draws anew"
    pipe.close()


def test_relative_plugin_path_resolves_from_base_dir_and_reloads(plugin_dir):
    # Relative to base_dir (the YAML file's folder for files); the second pipeline reuses the loaded plugin.
    for bias in (0.0, -2.0):
        pipe = conveyor.Pipeline(yaml("libexample_scale.so", bias=bias, batch=2), base_dir=plugin_dir)
        batch = pipe.build().outputs()
        values, factors = np.from_dlpack(batch["values"]), np.from_dlpack(batch["factors"])
        np.testing.assert_allclose(np.from_dlpack(batch["scaled"]), expected(values, factors, bias),
                                   rtol=1e-6, atol=1e-6)


def test_missing_plugin_names_the_file_and_yaml_position(tmp_path):
    missing = str(tmp_path / "libnope.so")
    with pytest.raises(conveyor.PluginError) as e:
        conveyor.Pipeline(yaml(missing))
    assert "plugin " + missing + ": file not found" in str(e.value)
    assert ":2:" in str(e.value), "the error carries the line of the plugins: entry"


@pytest.mark.parametrize("name,message", [
    ("libnot_a_plugin.so", "not a Conveyor plugin: no conveyor_plugin_abi_version symbol"),
    ("libwrong_abi.so", "ABI version mismatch"),
])
def test_broken_plugins_are_rejected_with_the_loader_message(plugin_dir, name, message):
    path = os.path.join(plugin_dir, name)
    if not os.path.exists(path):
        pytest.skip("%s not built next to the example plugin" % name)
    with pytest.raises(conveyor.PluginError) as e:
        conveyor.Pipeline(yaml(path))
    assert message in str(e.value) and path in str(e.value)


def test_plugin_operator_error_names_the_node(plugin_dir):
    # example.scale takes float32 only; an int32 input is refused with the node's description.
    cast = "  - {op: cast, name: to_int, inputs: [values], args: {dtype: int32}, outputs: [ints]}\n"
    text = yaml(os.path.join(plugin_dir, "libexample_scale.so"), extra_ops=cast).replace("inputs: [values], args: {factor",
                                                                                        "inputs: [ints], args: {factor")
    with pytest.raises(conveyor.Error) as e:
        pipe = conveyor.Pipeline(text)
        pipe.build().outputs()
    assert "scaler" in str(e.value) and "float32" in str(e.value)


def test_gpu_plugin_from_python_with_torch(plugin_dir, torch):
    # The same pipeline on the CPU draws the same values (random nodes run on the CPU in both), so
    # its outputs are the reference; only the GPU pipeline's GPU output is read (through torch).
    plugin = os.path.join(plugin_dir, "libexample_scale.so")
    gpu = conveyor.Pipeline(yaml(plugin, device="gpu", batch=5)).build()
    cpu = conveyor.Pipeline(yaml(plugin, device="cpu", batch=5)).build()
    for _ in range(3):
        batch, ref = gpu.outputs(), cpu.outputs()
        scaled = torch.from_dlpack(batch["scaled"])  # ordered on torch's current stream
        assert scaled.is_cuda and tuple(scaled.shape) == (5, 6)
        got = (scaled * 1).cpu().numpy()  # a kernel on torch's stream, then the copy
        values, factors = np.from_dlpack(ref["values"]), np.from_dlpack(ref["factors"])
        np.testing.assert_allclose(got, expected(values, factors, 0.5), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got, np.from_dlpack(ref["scaled"]), rtol=1e-6, atol=1e-6)
        del batch, ref, scaled
        gpu.run()
        cpu.run()
    gpu.close()
    cpu.close()
