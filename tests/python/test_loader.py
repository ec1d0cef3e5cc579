"""conveyor.torch.Loader: epochs, len() and last_batch_policy over real readers.file pipelines.

The CPU tests run without PyTorch: the loader's to_tensor hook is numpy.from_dlpack, so the same
epoch, trimming and reset code runs as under torch. Every file of the generated dataset names itself
("c1/s007"), so each epoch's yield can be checked sample by sample against the dataset. The GPU tests
(torch with CUDA; they skip with the reason elsewhere) run the same checks on torch CUDA tensors and
feed a small model.
"""
import os

import pytest

try:
    import conveyor
    from conveyor.torch import EpochPlan, Loader
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")

N = 10  # files: 4 in class c0, 6 in class c1


def make_dataset(root, fixed_length=False):
    names = {}
    for i in range(N):
        label = 0 if i < 4 else 1
        name = "c%d/s%03d" % (label, i)
        pad = 4 if fixed_length else i % 5  # different sizes: batches become lists of samples
        os.makedirs(os.path.join(root, "c%d" % label), exist_ok=True)
        with open(os.path.join(root, name + ".jpg"), "wb") as f:
            f.write((name + "#" * pad).encode())
        names[name] = label
    return names


def pipeline_yaml(root, batch=4, pad=False, shard=(0, 1), prefetch=2, extra_ops="", outputs="data, label",
                  device="cpu"):
    # On a CPU pipeline, nodes asking for the GPU fall back to the CPU: GPU tests pass device="gpu".
    return ("pipeline: {name: loader_test, batch_size: %d, device: %s, num_threads: 2, prefetch_depth: %d, "
            "seed: 7}\nops:\n"
            "  - {op: readers.file, name: reader, args: {file_root: %s, random_shuffle: true, pad_last_batch: %s, "
            "shard_id: %d, num_shards: %d}, outputs: [data, label]}\n%s"
            "outputs: [%s]\n" % (batch, device, prefetch, root, "true" if pad else "false", shard[0], shard[1], extra_ops, outputs))


def names_of(batch):
    """The sample names in a yielded dict, checking each label against its name."""
    data, labels = batch["data"], batch["label"]
    rows = data if isinstance(data, list) else list(data)
    names = [bytes(np.asarray(r)).decode().rstrip("#") for r in rows]
    labels = np.asarray(labels).reshape(-1)
    assert len(labels) == len(names)
    assert [int(n[1]) for n in names] == labels.tolist(), "labels follow the class folders"
    return names


def run_epoch(loader):
    before = len(loader)
    epoch = [names_of(data[0]) for data in loader]
    assert len(epoch) == before, "len() announced the epoch's batches"
    return epoch


@pytest.fixture
def dataset(tmp_path):
    return str(tmp_path), make_dataset(str(tmp_path))


def loader_for(root, policy, batch=4, pad=False, size=-1, prefetch=2, **kwargs):
    pipe = conveyor.Pipeline(pipeline_yaml(root, batch=batch, pad=pad, prefetch=prefetch))
    # File bytes of different lengths: per-sample lists, asked for (DALI's default refuses them).
    kwargs.setdefault("ragged", "list")
    return Loader(pipe, ["data", "label"], reader_name="reader", size=size, last_batch_policy=policy,
                  to_tensor=np.from_dlpack, **kwargs)


# ---- the plan, against a sample-by-sample definition ---------------------------------------------

@pytest.mark.parametrize("policy", ["fill", "partial", "drop"])
def test_plan_matches_the_sample_level_definition(policy):
    for e in range(1, 13):
        for r in range(1, e + 1):
            for b in range(1, 9):
                for epoch in range(4):
                    lo, hi = epoch * e, epoch * e + r
                    want = []
                    for k in range((hi + b) // b + 1):
                        samples = set(range(k * b, (k + 1) * b))
                        inside = sorted(samples & set(range(lo, hi)))
                        if policy == "fill" and lo <= k * b < hi:
                            want.append((k, None))
                        elif policy == "drop" and samples <= set(range(lo, hi)):
                            want.append((k, None))
                        elif policy == "partial" and inside:
                            trim = (inside[0] - k * b, inside[-1] + 1 - k * b)
                            want.append((k, None if trim == (0, b) else trim))
                    plan = EpochPlan(epoch, e, r, b, policy)
                    got = [(k, plan.trim(k)) for k in range(plan.first, plan.stop)]
                    assert got == want, (policy, e, r, b, epoch)
                    assert len(plan) == len(want)


# ---- readers.file without padding (the stream runs on) -------------------------------------------

def test_partial_sees_every_sample_exactly_once_per_epoch(dataset):
    root, names = dataset
    loader = loader_for(root, "partial")
    assert len(loader) == 3
    orders = []
    # Stream samples [10k, 10k + 10): the batch over a boundary ends one epoch and starts the next.
    for lengths in ([4, 4, 2], [2, 4, 4], [4, 4, 2]):
        epoch = run_epoch(loader)
        assert [len(b) for b in epoch] == lengths
        flat = [n for b in epoch for n in b]
        assert sorted(flat) == sorted(names), "every sample exactly once"
        orders.append(flat)
    assert orders[0] != orders[1], "random_shuffle draws a new order each epoch"
    assert loader.epoch == 3


def test_fill_yields_full_batches_completed_from_the_next_epoch(dataset):
    root, names = dataset
    loader = loader_for(root, "fill")
    first, second = run_epoch(loader), run_epoch(loader)
    assert len(first) == 3 and all(len(b) == 4 for b in first + second)
    flat = [n for b in first for n in b]
    assert set(names) <= set(flat) and len(flat) == 12
    # The last batch's 2 extra samples open the next epoch, which therefore starts at its 3rd sample.
    assert len(second) == 2  # stream samples 12..19; 20..23 start at 20 = 2E, so they are epoch 2's


def test_drop_yields_only_full_batches_inside_the_epoch(dataset):
    root, names = dataset
    loader = loader_for(root, "drop")
    assert len(loader) == 2
    for _ in range(2):
        epoch = run_epoch(loader)
        flat = [n for b in epoch for n in b]
        assert all(len(b) == 4 for b in epoch) and len(set(flat)) == len(flat) and set(flat) <= set(names)


def test_skipped_batches_take_a_slot_and_the_error_says_so(dataset):
    root, _ = dataset
    loader = loader_for(root, "drop")
    for data in loader:  # epoch 0 (2 batches); `data` still holds batch 1 when epoch 1 starts
        pass
    with pytest.raises(conveyor.InvalidArgumentError) as e:
        next(loader)  # epoch 1 skips batch 2 (it straddles the boundary) to reach batch 3
    assert "batch 3 follows 1 batch(es) that last_batch_policy skips" in str(e.value)
    assert "use prefetch_depth >= 3" in str(e.value) and "still held by the outputs of iteration 1" in str(e.value)
    del data
    roomy = loader_for(root, "drop", prefetch=3)
    for _ in range(2):
        for data in roomy:
            assert len(names_of(data[0])) == 4


# ---- readers.file with pad_last_batch -------------------------------------------------------------

def test_padded_reader_fill_includes_padding_and_size_trims_it(dataset):
    root, names = dataset
    fill = loader_for(root, "fill", pad=True)
    epoch = run_epoch(fill)
    assert [len(b) for b in epoch] == [4, 4, 4]
    last = epoch[-1]
    assert last[1] == last[2] == last[3], "the tail repeats the shard's last sample"
    assert sorted(set(n for b in epoch for n in b)) == sorted(names)

    partial = loader_for(root, "partial", pad=True, size=N)
    for _ in range(2):
        epoch = run_epoch(partial)
        assert [len(b) for b in epoch] == [4, 4, 2]
        assert sorted(n for b in epoch for n in b) == sorted(names)

    drop = loader_for(root, "drop", pad=True, size=N)
    assert len(drop) == 2 and [len(b) for b in run_epoch(drop)] == [4, 4]


def test_uniform_samples_come_as_one_batch_array_and_are_trimmed_as_views(tmp_path):
    names = make_dataset(str(tmp_path), fixed_length=True)  # every file 11 bytes
    loader = loader_for(str(tmp_path), "partial", prefetch=4)  # the test keeps a whole epoch
    epoch = [data[0] for data in loader]
    assert [b["data"].shape for b in epoch] == [(4, 11), (4, 11), (2, 11)]
    assert all(isinstance(b["data"], np.ndarray) for b in epoch)
    assert epoch[-1]["data"].base is not None, "the trimmed batch is a view, not a copy"
    assert sorted(n for b in epoch for n in names_of(b)) == sorted(names)


# ---- two pipelines (shards) -----------------------------------------------------------------------

def test_two_shards_together_see_every_sample_once_per_epoch(dataset):
    root, names = dataset
    pipes = [conveyor.Pipeline(pipeline_yaml(root, batch=2, shard=(s, 2))) for s in range(2)]
    loader = Loader(pipes, ["data", "label"], reader_name="reader", last_batch_policy="partial",
                    to_tensor=np.from_dlpack, ragged="list")
    assert len(loader) == 3  # 5 samples per shard, batches of 2
    for _ in range(2):
        seen = [n for data in loader for d in data for n in names_of(d)]
        assert sorted(seen) == sorted(names)


# ---- resets, endless mode, errors -----------------------------------------------------------------

def test_without_auto_reset_the_epoch_stays_ended_until_reset(dataset):
    root, _ = dataset
    loader = loader_for(root, "partial", auto_reset=False)
    first = run_epoch(loader)
    assert list(loader) == [] and loader.epoch == 0
    loader.reset()
    assert len(run_epoch(loader)) == 3 and loader.epoch == 1
    assert len(first) == 3
    middle = loader_for(root, "fill", auto_reset=False)
    next(middle)
    with pytest.warns(UserWarning, match="the current epoch has not ended; ignored"):
        middle.reset()
    assert middle.epoch == 0 and len(list(middle)) == 2, "the epoch goes on after an ignored reset"


def test_without_reader_or_size_it_runs_on_without_len(dataset):
    root, names = dataset
    pipe = conveyor.Pipeline(pipeline_yaml(root))
    loader = Loader(pipe, ["data", "label"], to_tensor=np.from_dlpack, ragged="list")
    seen = [n for _, data in zip(range(5), loader) for n in names_of(data[0])]
    assert len(seen) == 20 and set(seen) == set(names)
    with pytest.raises(TypeError, match="no epochs, so no len"):
        len(loader)


def test_size_alone_sets_the_epoch(dataset):
    root, names = dataset
    pipe = conveyor.Pipeline(pipeline_yaml(root))
    loader = Loader(pipe, ["data", "label"], size=N, last_batch_policy="partial", to_tensor=np.from_dlpack,
                    ragged={"data": "list"})
    assert sorted(n for b in run_epoch(loader) for n in b) == sorted(names)


def test_output_map_is_positional(dataset):
    root, _ = dataset
    pipe = conveyor.Pipeline(pipeline_yaml(root, outputs="label, data"))
    batch = next(Loader(pipe, ["first", "second"], to_tensor=np.from_dlpack, ragged={"second": "list"}))[0]
    assert list(batch) == ["first", "second"]
    assert batch["first"].dtype == np.int32 and isinstance(batch["second"], list)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(last_batch_policy="pad"), ValueError, "last_batch_policy must be one of 'fill', 'drop', 'partial', got 'pad'"),
    (dict(output_map=["a", "a"]), ValueError, "output_map must name each pipeline output once"),
    (dict(output_map=["only"]), ValueError, "output_map names 1 outputs (only), but the pipeline has 2 (data, label)"),
    (dict(size=11), ValueError, "must be at most the epoch size 10 that reader 'reader' reports, got 11"),
    (dict(reader_name="nope"), conveyor.Error, "nope"),
])
def test_bad_arguments_say_what_was_expected(dataset, kwargs, error, message):
    root, _ = dataset
    args = dict(output_map=["data", "label"], reader_name="reader", to_tensor=np.from_dlpack, ragged="list")
    args.update(kwargs)
    with pytest.raises(error) as e:
        loader = Loader(conveyor.Pipeline(pipeline_yaml(root)), **args)
        next(loader)
    assert message in str(e.value)


def test_importing_the_module_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, conveyor.torch; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ---- GPU, with torch ------------------------------------------------------------------------------

GPU_OPS = ("  - {op: copy, name: to_gpu, device: gpu, inputs: [data], outputs: [gdata]}\n"
           "  - {op: copy, name: labels_to_gpu, device: gpu, inputs: [label], outputs: [glabel]}\n")


@pytest.mark.parametrize("policy,pad,size,lengths", [  # batch sizes of epochs 0 and 1
    ("partial", False, -1, ([4, 4, 2], [2, 4, 4])), ("fill", True, -1, ([4, 4, 4],) * 2),
    ("partial", True, N, ([4, 4, 2],) * 2), ("drop", True, N, ([4, 4],) * 2), ("drop", False, -1, ([4, 4],) * 2)])
def test_gpu_two_epochs_with_torch(tmp_path, torch, policy, pad, size, lengths):
    names = make_dataset(str(tmp_path))
    # prefetch 3: the loop's variables keep the last batch of epoch 0 while "drop" skips one (see above)
    pipe = conveyor.Pipeline(pipeline_yaml(str(tmp_path), pad=pad, extra_ops=GPU_OPS, outputs="gdata, glabel",
                                           device="gpu", prefetch=3))
    loader = Loader(pipe, ["data", "label"], reader_name="reader", size=size, last_batch_policy=policy,
                    ragged={"data": "list"})
    for expected_lengths in lengths:
        assert len(loader) == len(expected_lengths)
        epoch = []
        for data in loader:
            batch = data[0]
            rows = batch["data"] if isinstance(batch["data"], list) else list(batch["data"])
            assert all(t.is_cuda for t in rows) and batch["label"].is_cuda
            host = {"data": [t.cpu().numpy() for t in rows], "label": batch["label"].cpu().numpy()}
            epoch.append(names_of(host))
        assert [len(b) for b in epoch] == expected_lengths
        flat = [n for b in epoch for n in b]
        if policy == "partial" or (policy == "fill" and pad):
            assert set(flat) == set(names) and (len(flat) == N or policy == "fill")


def test_gpu_loader_feeds_a_torch_model(tmp_path, torch):
    names = make_dataset(str(tmp_path), fixed_length=True)  # 11 bytes each: batches of [B, 11]
    ops = ("  - {op: cast, name: to_float, device: gpu, inputs: [data], args: {dtype: float32}, outputs: [x]}\n"
           "  - {op: copy, name: labels_to_gpu, device: gpu, inputs: [label], outputs: [y]}\n")
    pipe = conveyor.Pipeline(pipeline_yaml(str(tmp_path), extra_ops=ops, outputs="x, y", device="gpu"))
    loader = Loader(pipe, ["x", "y"], reader_name="reader", last_batch_policy="partial")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(11, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(2):
        samples, seen = 0, []
        for data in loader:
            x, y = data[0]["x"], data[0]["y"].reshape(-1).long()
            assert x.is_cuda and x.dtype == torch.float32 and x.shape[1] == 11
            logits = model(x / 255)
            expected = model(torch.tensor(x.cpu().numpy(), device="cuda") / 255)
            torch.testing.assert_close(logits, expected)  # the loader's tensor is the data, ready on the stream
            loss = torch.nn.functional.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            samples += x.shape[0]
            seen += names_of({"data": x.cpu().numpy().astype(np.uint8), "label": y.cpu().numpy()})
        assert samples == N and sorted(seen) == sorted(names), "every sample exactly once per epoch"
