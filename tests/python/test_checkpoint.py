"""Pipeline.checkpoint() / Pipeline(..., checkpoint=state): a resumed pipeline continues the batch
stream of an uninterrupted one bit for bit (shuffled shard, random draws, prefetch 3, checkpoints
mid-epoch and at an epoch boundary); a checkpoint of another pipeline is refused naming what
differs (issue 14, docs/distributed.md)."""
import itertools

import numpy as np
import pytest

import conveyor


def _yaml(root, seed=5, shard=1):
    return ("pipeline: {name: py_ckpt, batch_size: 3, device: cpu, prefetch_depth: 3, seed: %d}\nops:\n"
            "  - {op: readers.file, name: reader, args: {file_root: '%s', random_shuffle: true, shard_id: %d, "
            "num_shards: 2, pad_last_batch: true}, outputs: [data, labels]}\n"
            "  - {op: random.uniform, name: u, args: {range: [0.0, 1.0], shape: [2]}, outputs: [noise]}\n"
            "outputs: [data, labels, noise]\n" % (seed, root, shard))


def _dataset(tmp_path):
    rng = np.random.default_rng()
    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(7):
            (tmp_path / c / ("%d.jpg" % i)).write_bytes(rng.integers(0, 256, int(rng.integers(1, 50)),
                                                                     dtype=np.uint8).tobytes())
    return str(tmp_path)


def _as_bytes(batch):
    out = []
    for name in ("data", "labels", "noise"):
        value = batch[name]
        if isinstance(value, list):
            out.append([np.from_dlpack(s).tobytes() for s in value])
        else:
            out.append([np.from_dlpack(value).tobytes()])
    return out


def _take(pipe, n):
    return [_as_bytes(b) for b in itertools.islice(pipe, n)]


def test_resume_reproduces_the_stream(tmp_path):
    root = _dataset(tmp_path)  # 14 files, 2 shards of 7, batches of 3: 3 batches per epoch
    with conveyor.Pipeline(_yaml(root)) as p:
        whole = _take(p, 8)
    assert all(whole[i] != whole[i - 1] for i in range(1, len(whole)))
    for k in (1, 3, 4):
        with conveyor.Pipeline(_yaml(root)) as p:
            first = _take(p, k)
            state = p.checkpoint()
        assert isinstance(state, bytes) and state.startswith(b"conveyor-checkpoint 1\n")
        assert b"\niteration %d\n" % k in state
        with conveyor.Pipeline(_yaml(root), checkpoint=state) as p:
            rest = _take(p, 8 - k)
        assert first + rest == whole, "checkpoint after %d" % k


def test_checkpoint_of_another_pipeline_is_refused(tmp_path):
    root = _dataset(tmp_path)
    with conveyor.Pipeline(_yaml(root)) as p:
        with pytest.raises(conveyor.InvalidArgumentError, match=r"Checkpoint\(\) before Build\(\)"):
            p.checkpoint()
        _take(p, 2)
        state = p.checkpoint()
    with conveyor.Pipeline(_yaml(root, seed=6), checkpoint=state) as p:
        with pytest.raises(conveyor.InvalidArgumentError, match="seed 5 in the checkpoint, 6 here"):
            p.build()
    with conveyor.Pipeline(_yaml(root, shard=0), checkpoint=state) as p:
        with pytest.raises(conveyor.InvalidArgumentError,
                           match="it read shard_id 1 of num_shards 2, this node reads shard_id 0 of num_shards 2"):
            p.build()
    with pytest.raises(conveyor.InvalidArgumentError, match="not a checkpoint"):
        conveyor.Pipeline(_yaml(root), checkpoint=b"{}")
