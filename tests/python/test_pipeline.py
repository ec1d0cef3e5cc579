"""conveyor.Pipeline: YAML pipelines from Python, iterated as dicts of zero-copy output tensors.

CPU pipelines run everywhere (NumPy reads the outputs); the GPU tests skip with the reason when
there is no GPU or no PyTorch with CUDA, and otherwise check torch.from_dlpack of GPU outputs
against the CPU pipeline (same seed, same draws) and feed external sources from torch CUDA tensors.
"""
import gc
import itertools

import pytest

try:
    import conveyor
except ImportError as e:  # the shared library is missing: say how to point at it
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")

from conftest import repo_file  # noqa: E402


def yaml(ops, outputs, device="cpu", prefetch=2, batch=4, capture=False):
    return ("pipeline: {name: py_test, batch_size: %d, device: %s, num_threads: 2, prefetch_depth: %d, seed: 3, "
            "graph_capture: %s}\nops:\n%soutputs: [%s]\n" %
            (batch, device, prefetch, "true" if capture else "false", ops, outputs))


def random_ops(device="cpu"):
    return ("  - {op: random.uniform, name: noise, device: %s, args: {range: [-10.0, 10.0], shape: [3, 5]}, "
            "outputs: [noise]}\n"
            "  - {op: cast, name: quantize, device: %s, inputs: [noise], args: {dtype: int32}, "
            "outputs: [quantized]}\n" % (device, device))


def external_ops(device="cpu"):
    return ("  - {op: external_source, name: src, device: %s, args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
            "  - {op: copy, name: dup, device: %s, inputs: [x], outputs: [y]}\n" % (device, device))


RANDOM_CPU = yaml(random_ops(), "noise, quantized")
EXTERNAL_CPU = yaml(external_ops(), "y")


# ---- CPU pipelines -------------------------------------------------------------------------------

def test_iteration_yields_dicts_of_batch_tensors():
    pipe = conveyor.Pipeline(RANDOM_CPU)
    seen = []
    for k, batch in enumerate(itertools.islice(pipe, 5)):
        assert set(batch) == {"noise", "quantized"}
        noise = np.from_dlpack(batch["noise"])
        quantized = np.from_dlpack(batch["quantized"])
        assert noise.shape == (4, 3, 5) and noise.dtype == np.float32
        assert quantized.dtype == np.int32
        assert ((noise >= -10) & (noise < 10)).all()
        np.testing.assert_array_equal(quantized, noise.astype(np.int32))  # C++ static_cast truncates too
        assert batch["noise"].device == (1, 0)  # kDLCPU
        seen.append(noise.copy())
    assert not any(np.array_equal(seen[0], s) for s in seen[1:]), "each iteration draws anew"


def test_same_seed_same_batches_and_outputs_are_zero_copy():
    a, b = conveyor.Pipeline(RANDOM_CPU), conveyor.Pipeline(RANDOM_CPU)
    for x, y in itertools.islice(zip(a, b), 3):
        np.testing.assert_array_equal(np.from_dlpack(x["noise"]), np.from_dlpack(y["noise"]))
        view = np.from_dlpack(x["noise"])
        assert view.__array_interface__["data"][0] == x["noise"].data_ptr


def test_file_path_and_from_yaml(tmp_path, monkeypatch):
    monkeypatch.setenv("BATCH_SIZE", "3")
    pipe = conveyor.Pipeline(repo_file("pipelines/random_augment.yaml", "pipelines/random_augment.yaml"))
    batch = next(iter(pipe))
    assert set(batch) == {"quantized", "flips"}
    assert batch["quantized"].shape == (3, 4, 4)
    path = tmp_path / "p.yaml"
    path.write_text(RANDOM_CPU)
    assert next(iter(conveyor.Pipeline(path)))["noise"].shape == (4, 3, 5)  # os.PathLike
    with conveyor.Pipeline.from_yaml(RANDOM_CPU) as pipe:
        assert next(iter(pipe))["noise"].shape == (4, 3, 5)


def test_feed_numpy_batches_strided_views_and_sample_lists():
    pipe = conveyor.Pipeline(EXTERNAL_CPU)
    assert pipe.external_sources == ("src",)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 8), dtype=np.float32)   # 32-byte samples: used in place
    b = rng.standard_normal((3, 5), dtype=np.float32)   # 20-byte samples: copied
    c = rng.standard_normal((6, 2), dtype=np.float32).T  # strided
    samples = [rng.standard_normal(n, dtype=np.float32) for n in (3, 1, 6)]
    pipe.feed("src", a)
    pipe.build()
    for data in (b, c):
        pipe.feed("src", data)
        pipe.run()
    pipe.feed("src", samples)
    pipe.run()
    for expected in (a, b, c):
        out = pipe.outputs()
        np.testing.assert_array_equal(np.from_dlpack(out["y"]), expected)
    out = pipe.outputs()
    assert isinstance(out["y"], list) and len(out["y"]) == 3
    for got, expected in zip(out["y"], samples):
        np.testing.assert_array_equal(np.from_dlpack(got), expected)


def test_outputs_as_sample_lists_and_tensors_outlive_the_pipeline():
    pipe = conveyor.Pipeline(RANDOM_CPU).build()
    out = pipe.outputs(samples=True)
    assert [t.shape for t in out["noise"]] == [(3, 5)] * 4
    kept = np.from_dlpack(out["noise"][2]).copy()
    pipe.close()
    del pipe
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(out["noise"][2]), kept)


def test_a_held_batch_holds_its_slot():
    pipe = conveyor.Pipeline(yaml(random_ops(), "noise", prefetch=1))
    it = iter(pipe)
    first = next(it)
    before = np.from_dlpack(first["noise"]).copy()
    with pytest.raises(conveyor.InvalidArgumentError, match=r"still held by the outputs of iteration 0; release "
                                                            r"them first \(prefetch_depth 1\)"):
        next(it)
    np.testing.assert_array_equal(np.from_dlpack(first["noise"]), before)
    del first
    gc.collect()
    assert pipe.outputs()["noise"].shape == (4, 3, 5)


# ---- errors --------------------------------------------------------------------------------------

def test_reader_epochs_and_epoch_size(tmp_path):
    # 2 classes x 5 files of distinct bytes; batch 4 with pad_last_batch: 3 batches per epoch.
    contents = {}
    for c in ("dogs", "cats"):
        (tmp_path / c).mkdir()
        for i in range(5):
            data = bytes([len(contents)] * (i + 1 + len(contents)))
            (tmp_path / c / ("%d.jpg" % i)).write_bytes(data)
            contents[data] = 0 if c == "cats" else 1
    text = ("pipeline: {name: py_reader, batch_size: 4, device: cpu, seed: 9}\nops:\n"
            "  - {op: readers.file, name: reader, args: {file_root: '%s', random_shuffle: true, "
            "pad_last_batch: true}, outputs: [data, labels]}\noutputs: [data, labels]\n" % tmp_path)
    with conveyor.Pipeline(text) as p:
        with pytest.raises(conveyor.InvalidArgumentError, match=r"EpochSize\(\) before Build\(\)"):
            p.epoch_size("reader")
        p.build()
        assert p.epoch_size("reader") == 12
        with pytest.raises(conveyor.InvalidArgumentError, match='no node named "readr"'):
            p.epoch_size("readr")
        for epoch in range(2):
            seen = []
            for batch in itertools.islice(p, 3):
                labels = np.from_dlpack(batch["labels"]).reshape(-1)
                for data, label in zip(batch["data"], labels):
                    raw = np.from_dlpack(data).tobytes()
                    assert contents[raw] == int(label)
                    seen.append(raw)
            assert set(seen) == set(contents), "epoch %d must see every file" % epoch
            assert len(seen) == 12


def test_bad_yaml_text_names_line_and_column():
    with pytest.raises(conveyor.ConfigError, match=r'<string>:3:\d+: .*unknown argument "rnage"; did you mean '
                                                   r'"range"\?'):
        conveyor.Pipeline(yaml("  - {op: random.uniform, args: {rnage: [1.0, 2.0]}, outputs: [z]}\n", "z"))


def test_bad_yaml_file_names_file_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml("  - {op: random.unifrom, name: n, outputs: [z]}\n", "z"))
    with pytest.raises(conveyor.ConfigError) as info:
        conveyor.Pipeline(str(path))
    assert "%s:3:" % path in str(info.value)
    assert 'did you mean "random.uniform"' in str(info.value)
    with pytest.raises(conveyor.ConfigError, match="missing.yaml: cannot open the pipeline file"):
        conveyor.Pipeline(str(tmp_path / "missing.yaml"))


def test_feed_errors_name_the_node():
    pipe = conveyor.Pipeline(EXTERNAL_CPU)
    batch = np.ones((2, 4), np.float32)
    with pytest.raises(conveyor.InvalidArgumentError, match=r'got "scr", which is no node of it; did you mean "src"'):
        pipe.feed("scr", batch)
    with pytest.raises(conveyor.InvalidArgumentError, match=r'node "dup" of pipeline "py_test" runs op "copy"'):
        pipe.feed("dup", batch)
    with pytest.raises(TypeError, match="as_tensor: expected an object with __dlpack__"):
        pipe.feed("src", object())
    pipe.build()
    with pytest.raises(conveyor.InvalidArgumentError, match='node "src" expects dtype float32, got int32'):
        pipe.feed("src", np.ones((2, 4), np.int32))
    with pytest.raises(conveyor.InvalidArgumentError, match="no iteration is scheduled; call Run"):
        pipe.outputs()
    with pytest.raises(conveyor.InvalidArgumentError, match='external_source node "src" has no batch'):
        pipe.run()
    with pytest.raises(TypeError, match=r"external_source nodes \(src\): feed each of them, then run\(\)"):
        iter(pipe)


def test_closed_and_misused_pipelines():
    pipe = conveyor.Pipeline(RANDOM_CPU)
    with pytest.raises(conveyor.InvalidArgumentError, match=r"Run\(\) before Build\(\)"):
        pipe.run()
    pipe.build()
    with pytest.raises(conveyor.InvalidArgumentError, match=r"Build\(\) called twice"):
        pipe.build()
    pipe.close()
    with pytest.raises(conveyor.InvalidArgumentError, match="expected an open pipeline, got one that was closed"):
        pipe.outputs()
    with pytest.raises(TypeError, match="expected a file path or YAML text"):
        conveyor.Pipeline(42)


# ---- GPU -----------------------------------------------------------------------------------------

# The `torch` fixture (conftest.py) skips with the reason without a GPU or PyTorch with CUDA.


@pytest.mark.parametrize("capture", [False, True])
def test_torch_reads_gpu_outputs_equal_to_the_cpu_pipelines(torch, capture):
    gpu = conveyor.Pipeline(yaml(random_ops("gpu"), "noise, quantized", device="gpu", capture=capture))
    cpu = conveyor.Pipeline(RANDOM_CPU)
    side = torch.cuda.Stream()
    for g, c in itertools.islice(zip(gpu, cpu), 6):
        with torch.cuda.stream(side):  # the export orders torch's current stream after the iteration
            noise = torch.from_dlpack(g["noise"])
            quantized = torch.from_dlpack(g["quantized"])
            assert noise.is_cuda and noise.shape == (4, 3, 5)
            got_noise, got_quantized = noise.cpu().numpy(), quantized.cpu().numpy()
        np.testing.assert_array_equal(got_noise, np.from_dlpack(c["noise"]))
        np.testing.assert_array_equal(got_quantized, np.from_dlpack(c["quantized"]))


def test_torch_tensors_keep_their_slot_and_stay_correct(torch):
    pipe = conveyor.Pipeline(yaml(random_ops("gpu"), "noise", device="gpu", prefetch=2))
    ref = conveyor.Pipeline(yaml(random_ops(), "noise", prefetch=2))
    it, ref_it = iter(pipe), iter(ref)
    held = torch.from_dlpack(next(it)["noise"])  # only the torch tensor holds iteration 0 now
    expected = np.from_dlpack(next(ref_it)["noise"]).copy()
    gc.collect()
    next(it)  # iteration 1, the other slot
    np.testing.assert_array_equal(held.cpu().numpy(), expected)
    del held
    gc.collect()
    assert next(it)["noise"].shape == (4, 3, 5)


def test_gpu_external_source_fed_from_torch_cuda_tensors(torch):
    pipe = conveyor.Pipeline(yaml(external_ops("gpu"), "y", device="gpu", capture=True))
    torch.manual_seed(5)
    a = torch.randn(4, 8, device="cuda")  # in place
    b = torch.randn(3, 5, device="cuda")  # copied
    samples = [torch.randn(n, device="cuda") for n in (2, 7)]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        c = torch.randn(2, 8, device="cuda") * 3  # pending work on a side stream: the feed waits for it
    pipe.feed("src", a)
    pipe.build()
    for data, stream in ((b, None), (samples, None), (c, side)):
        pipe.feed("src", data, stream=stream)
        pipe.run()
    for expected in (a, b):
        torch.testing.assert_close(torch.from_dlpack(pipe.outputs()["y"]), expected, rtol=0, atol=0)
    out = pipe.outputs()["y"]
    for got, expected in zip(out, samples):
        torch.testing.assert_close(torch.from_dlpack(got), expected, rtol=0, atol=0)
    torch.testing.assert_close(torch.from_dlpack(pipe.outputs()["y"]), c, rtol=0, atol=0)


def test_stage_times_count_iterations_and_grow():
    with conveyor.Pipeline(yaml(random_ops(), "quantized")) as pipe:
        with pytest.raises(conveyor.InvalidArgumentError, match="before Build"):
            pipe.stage_times()
        pipe.build()
        it = iter(pipe)
        for _ in range(3):
            next(it)
        first = pipe.stage_times()
        for _ in range(5):
            next(it)
        second = pipe.stage_times()
    assert set(first) == {"iterations", "cpu_stage", "gpu_issue", "gpu_wait", "idle"}
    # the stage runs up to prefetch_depth iterations ahead of the ones taken
    assert 3 <= first["iterations"] <= 3 + 2
    assert second["iterations"] - first["iterations"] >= 5 - 2
    assert second["cpu_stage"] > first["cpu_stage"] > 0  # a CPU pipeline's work is all CPU stage
    for key in ("gpu_issue", "gpu_wait", "idle"):
        assert second[key] >= first[key] >= 0
