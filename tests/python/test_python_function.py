"""python_function nodes from Python: conveyor.register_function, NumPy (and torch CPU) outputs,
per-sample and batch calls, errors with the traceback and the node's YAML position, the GIL (the
pipeline's threads call Python while Python threads wait in Conveyor calls), and lifetime (a
function deleted after registering still runs; closing the pipeline lets the registration go).
CPU only: runs everywhere NumPy is installed."""
import gc
import os
import re
import subprocess
import sys
import textwrap
import weakref

import pytest

try:
    import conveyor
except ImportError as e:  # the shared library is missing: say how to point at it
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")

LENGTHS = (5, 1, 8)  # one ragged batch: samples of different shapes


def yaml(function, args="", outputs=1, batch=len(LENGTHS)):
    """external_source "src" (float32 1-D samples) -> python_function "fn" -> y0, y1, ..."""
    names = ", ".join("y%d" % o for o in range(outputs))
    count = "" if outputs == 1 else ", num_outputs: %d" % outputs
    return ("pipeline: {name: fn_test, batch_size: %d, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 1}\n"
            "ops:\n"
            "  - {op: external_source, name: src, args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
            "  - op: python_function\n"
            "    name: fn\n"
            "    inputs: [x]\n"
            "    args: {function: %s%s%s}\n"
            "    outputs: [%s]\n"
            "outputs: [%s]\n" % (batch, function, count, args, names, names))


def position(text, function):
    """'<string>:line:col' of the function name in the YAML text."""
    for number, line in enumerate(text.splitlines(), 1):
        if "function: " + function in line:
            return "<string>:%d:%d" % (number, line.index("function: ") + len("function: ") + 1)
    raise AssertionError("no function: %s in the YAML" % function)


def batch(seed, lengths=LENGTHS):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 100.0, n).astype(np.float32) for n in lengths]


def run_once(text, seed=1):
    """Builds a pipeline, feeds one batch and returns (inputs, {name: [per-sample arrays]})."""
    pipe = conveyor.Pipeline(text)
    xs = batch(seed)
    pipe.feed("src", xs)
    pipe.build()
    try:
        out = pipe.outputs(samples=True)
        return xs, {name: [np.from_dlpack(t).copy() for t in tensors] for name, tensors in out.items()}
    finally:
        pipe.close()


@pytest.fixture
def name(request):
    """A function name of this test's own; unregistered at its end if it is still there."""
    fn_name = "py_" + re.sub(r"\W", "_", request.node.name)
    yield fn_name
    if fn_name in conveyor.registered_functions():
        conveyor.unregister_function(fn_name)


def test_batch_function_gets_read_only_lists_and_returns_arrays(name):
    seen = []

    @conveyor.register_function(name)
    def affine(xs):
        seen.append([(type(x), x.shape, x.dtype, x.flags.writeable) for x in xs])
        return [x * 2 + 1 for x in xs]

    xs, out = run_once(yaml(name))
    assert seen == [[(np.ndarray, (n,), np.float32, False) for n in LENGTHS]]
    for x, y in zip(xs, out["y0"]):
        np.testing.assert_array_equal(y, x * 2 + 1)
    assert name in conveyor.registered_functions()


def test_per_sample_calls_choose_their_outputs_shape_dtype_and_layout(name):
    calls = []

    def reverse_and_count(x):
        calls.append(x.shape)
        return x[::-1], np.array([x.size, x.size * 10], dtype=np.int32)  # a strided view, and another dtype

    conveyor.register_function(name, reverse_and_count)
    text = yaml(name, ", batch_processing: false, output_layouts: [W, C]", outputs=2)
    pipe = conveyor.Pipeline(text)
    xs = batch(2)
    pipe.feed("src", xs)
    pipe.build()
    out = pipe.outputs(samples=True)
    assert calls == [(n,) for n in LENGTHS]
    for x, y, count in zip(xs, out["y0"], out["y1"]):
        np.testing.assert_array_equal(np.from_dlpack(y), x[::-1])
        assert np.from_dlpack(count).dtype == np.int32
        np.testing.assert_array_equal(np.from_dlpack(count), [x.size, x.size * 10])
    pipe.close()


def test_a_batch_may_come_back_as_one_array(name):
    conveyor.register_function(name, lambda xs: np.stack(xs) * 3)
    pipe = conveyor.Pipeline(yaml(name))
    xs = batch(3, lengths=(4, 4, 4))
    pipe.feed("src", xs)
    pipe.build()
    y = np.from_dlpack(pipe.outputs()["y0"])
    np.testing.assert_array_equal(y, np.stack(xs) * 3)
    pipe.close()


def test_torch_cpu_tensors_are_accepted(name):
    torch = pytest.importorskip("torch")
    conveyor.register_function(name, lambda xs: [torch.from_numpy(x.copy()) * 2 for x in xs])
    xs, out = run_once(yaml(name))
    for x, y in zip(xs, out["y0"]):
        np.testing.assert_array_equal(y, x * 2)


def test_an_exception_carries_its_traceback_and_the_nodes_yaml_position(name):
    def failing(xs):
        raise ValueError("bad sample %d" % len(xs))

    conveyor.register_function(name, failing)
    text = yaml(name)
    with pytest.raises(conveyor.InvalidArgumentError) as error:
        run_once(text)
    message = str(error.value)
    assert position(text, name) + ": pipeline \"fn_test\": iteration 0: node \"fn\"" in message
    assert "argument \"function\" (\"%s\") failed on samples 0 to 2: Traceback (most recent call last):" % name \
        in message
    assert os.path.basename(__file__) in message and "in failing" in message
    assert message.endswith("ValueError: bad sample 3")


@pytest.mark.parametrize("result, expected", [
    (lambda xs: [x.astype(np.uint32) for x in xs], "output 0 of sample 0: expected one of bool, uint8, int8, "
                                                   "uint16, int16, int32, int64, float16, float32, float64, got uint32"),
    (lambda xs: xs[:2], "output 0: expected 3 samples (a list of arrays, or an array whose first dimension is the "
                        "batch), got 2"),
    (lambda xs: [np.zeros((1,) * 9, np.float32)] * 3, "ndim: expected 0 to 8, got 9"),
    (lambda xs: None, "output 0: expected an array, got None (does the function return its result?)"),
], ids=["dtype", "samples", "ndim", "none"])
def test_outputs_that_cannot_be_taken_are_named(name, result, expected):
    conveyor.register_function(name, result)
    with pytest.raises(conveyor.InvalidArgumentError, match="failed on samples 0 to 2") as error:
        run_once(yaml(name))
    assert expected in str(error.value)


def test_device_arrays_and_wrong_output_counts_are_refused(name):
    class OnTheGpu:
        def __dlpack_device__(self):
            return (2, 0)

    conveyor.register_function(name, lambda xs: [OnTheGpu() for _ in xs])
    with pytest.raises(conveyor.InvalidArgumentError) as error:
        run_once(yaml(name))
    assert "output 0 of sample 0: expected a host array (NumPy, a CPU torch tensor), got one on DLPack device " \
           "(2, 0); move it to the host first" in str(error.value)
    conveyor.register_function(name, lambda xs: [x for x in xs])
    with pytest.raises(conveyor.InvalidArgumentError) as error:
        run_once(yaml(name, outputs=2))
    assert "expected a tuple of 2 outputs (num_outputs: 2), got a list of 3" in str(error.value)


def test_inputs_cannot_be_written(name):
    def scribble(xs):
        xs[0][0] = 0.0
        return xs

    conveyor.register_function(name, scribble)
    with pytest.raises(conveyor.InvalidArgumentError, match="read-only"):
        run_once(yaml(name))


def test_an_unregistered_name_fails_the_build_at_its_position():
    text = yaml("py_nobody_registered")
    pipe = conveyor.Pipeline(text)
    pipe.feed("src", batch(1))
    with pytest.raises(conveyor.ConfigError) as error:
        pipe.build()
    message = str(error.value)
    assert position(text, "py_nobody_registered") + ": op \"python_function\" (fn): function " \
        "\"py_nobody_registered\" is not registered" in message
    assert "conveyor.register_function(\"py_nobody_registered\", fn)" in message
    pipe.close()


def test_lifetime_the_pipeline_keeps_its_function_until_closed(name):
    def make():
        def doubled(xs):
            return [2 * x for x in xs]
        return doubled

    fn = make()
    alive = weakref.ref(fn)
    conveyor.register_function(name, fn)
    pipe = conveyor.Pipeline(yaml(name))
    pipe.feed("src", batch(1))
    pipe.build()
    del fn
    gc.collect()
    conveyor.unregister_function(name)  # built pipelines keep what they bound
    assert name not in conveyor.registered_functions()
    for seed in (2, 3):
        out = pipe.outputs(samples=True)
        pipe.feed("src", batch(seed))
        pipe.run()
    for x, y in zip(batch(seed - 1), out["y0"]):  # the batch fed before the last outputs()
        np.testing.assert_array_equal(np.from_dlpack(y), 2 * x)
    del out, x, y  # outputs keep their pipeline's operators (and so the function) alive
    gc.collect()
    assert alive() is not None
    pipe.close()
    gc.collect()
    assert alive() is None, "the function outlived its registration and the pipeline using it"


def test_registering_again_changes_only_pipelines_built_later(name):
    conveyor.register_function(name, lambda xs: [x + 1 for x in xs])
    before = conveyor.Pipeline(yaml(name))
    before.feed("src", batch(4))
    before.build()
    conveyor.register_function(name, lambda xs: [x - 1 for x in xs])
    xs, out = run_once(yaml(name), seed=4)
    for x, y_before, y_after in zip(xs, before.outputs(samples=True)["y0"], out["y0"]):
        np.testing.assert_array_equal(np.from_dlpack(y_before), x + 1)
        np.testing.assert_array_equal(y_after, x - 1)
    before.close()


# The pipeline's threads (num_threads 4, prefetch 3, two function nodes: one per batch, one per
# sample) call Python while the main thread waits in next(pipe) and another thread runs Python
# without pause; then the pipeline is closed while prefetched calls are pending. A deadlock (a
# Conveyor call holding the GIL while a pipeline thread waits for it) times the child out.
GIL_SCRIPT = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    import conveyor

    sys.setswitchinterval(0.0005)  # each call waits for the spinning thread's GIL: keep the waits short

    conveyor.register_function("gil_batch", lambda xs: [x * 2 for x in xs])

    def per_sample(x):
        time.sleep(0.0005)  # a call that gives the GIL up midway
        return x + 1

    conveyor.register_function("gil_sample", per_sample)
    pipe = conveyor.Pipeline(
        "pipeline: {name: gil, batch_size: 8, device: cpu, num_threads: 4, prefetch_depth: 3, seed: 9}\\n"
        "ops:\\n"
        "  - {op: random.uniform, name: src, args: {shape: [16], range: [1, 2]}, outputs: [x]}\\n"
        "  - {op: python_function, name: a, inputs: [x], args: {function: gil_batch}, outputs: [ya]}\\n"
        "  - {op: python_function, name: b, inputs: [x], args: {function: gil_sample, batch_processing: false},"
        " outputs: [yb]}\\n"
        "outputs: [x, ya, yb]\\n")
    stop = threading.Event()
    spins = [0]

    def spin():
        while not stop.is_set():
            spins[0] += sum(range(100))

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        for k, out in zip(range(40), pipe):
            x = np.from_dlpack(out["x"])
            assert np.array_equal(np.from_dlpack(out["ya"]), x * 2), k
            assert np.array_equal(np.from_dlpack(out["yb"]), x + 1), k
            del out, x
        pipe.close()
    finally:
        stop.set()
        spinner.join()
    assert spins[0] > 0
    print("ok")
""")


def test_pipeline_threads_calling_python_never_deadlock_with_python_threads():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(conveyor.__path__[0])] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("CONVEYOR_LIB", conveyor.library_path)
    try:
        result = subprocess.run([sys.executable, "-c", GIL_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        pytest.fail("deadlock: the child did not finish in 120 s; stderr: %s" % (e.stderr,))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
