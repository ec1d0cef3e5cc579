"""tools/batch_costs.py: a bench JSON's timed iterations beside their batches' content. Over a
data set of random files (the tool reads bytes and the manifest, never decodes) with fresh random
sizes, and a bench JSON whose times this test makes from its own walk of the reader's order: the
tool must give each iteration (warm-up offset included) the same batch, so the time's correlation
with the batch's large photos is 1 and its TSV rows carry the counts made here."""
import json
import os
import random
import subprocess
import sys

import pytest

from conftest import repo_file

try:
    import conveyor
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

np = pytest.importorskip("numpy")

TOOL = repo_file("tools/batch_costs.py", "batch_costs.py")
FILES, BATCH, WARMUP, TIMED, SEED = 40, 4, 3, 12, 1234


def make_set(root, rng):
    (root / "0").mkdir(parents=True)
    lines = ["name\tformat\twidth\theight\tsubsampling\tprogressive\tquality\tbytes"]
    large = {}
    for i in range(FILES):
        name = "img_%05d.jpg" % i
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(20, 60)))
        (root / "0" / name).write_bytes(data)
        w = rng.choice([320, 640, 3200, 4000])
        large[name] = w >= 3000
        lines.append("%s\tjpeg\t%d\t%d\t%s\t%d\t90\t%d" % (name, w, 480, rng.choice(["420", "444"]),
                                                           rng.random() < 0.2, len(data)))
    (root / "0" / "MANIFEST.tsv").write_text("\n".join(lines) + "\n")
    return large


def reader_order(root, n):
    """Each batch's files as the pipeline's reader gives them (bytes matched back to names)."""
    by_bytes = {(root / "0" / f).read_bytes(): f for f in os.listdir(root / "0") if f.endswith(".jpg")}
    pipe = conveyor.Pipeline.from_yaml(
        "pipeline: {name: t, batch_size: %d, device: cpu, num_threads: 2, seed: %d}\nops:\n"
        "  - {op: readers.file, name: reader, args: {file_root: %s, random_shuffle: true}, "
        "outputs: [jpegs, labels]}\noutputs: [jpegs]\n" % (BATCH, SEED, json.dumps(str(root))))
    pipe.build()
    order = []
    for _ in range(n):
        order.append([by_bytes[np.from_dlpack(s).tobytes()] for s in pipe.next_batch(ragged="list")["jpegs"]])
    pipe.close()
    return order


def run_tool(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True, env=env, timeout=120)


def test_each_iteration_gets_its_batch(tmp_path):
    rng = random.Random()
    large = make_set(tmp_path / "set", rng)
    order = reader_order(tmp_path / "set", WARMUP + TIMED)
    counts = [sum(large[f] for f in order[WARMUP + i]) for i in range(TIMED)]
    bench = {"batch_size": BATCH, "warmup": WARMUP, "iteration_ms": [5.0 + 3.0 * c for c in counts],
             "decoder_call_ms": [4.0 + 3.0 * c for c in counts]}
    (tmp_path / "b.json").write_text(json.dumps(bench))
    r = run_tool("--data", str(tmp_path / "set"), "--batch", str(BATCH), "--seed", str(SEED),
                 "--tsv", str(tmp_path / "o.tsv"), str(tmp_path / "b.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.split("\t") for line in (tmp_path / "o.tsv").read_text().splitlines()[1:]]
    assert [int(row[1]) for row in rows] == list(range(WARMUP, WARMUP + TIMED))
    assert [int(row[7]) for row in rows] == counts  # the large photos of the batch this test walked to
    assert all(int(row[4]) == BATCH for row in rows)
    if len(set(counts)) > 1:  # every batch alike (unlikely): r is undefined
        assert "iteration_ms: r with mpx" in r.stdout and "large 1.00" in r.stdout, r.stdout
    assert "b.json: %d iterations" % TIMED in r.stdout


def test_refuses_a_bench_json_without_iteration_times(tmp_path):
    make_set(tmp_path / "set", random.Random(1))
    (tmp_path / "old.json").write_text(json.dumps({"batch_size": BATCH, "samples_per_s": {"median": 1.0}}))
    r = run_tool("--data", str(tmp_path / "set"), "--batch", str(BATCH), str(tmp_path / "old.json"))
    assert r.returncode != 0 and "has no iteration_ms" in r.stderr, r.stderr
    (tmp_path / "b8.json").write_text(json.dumps({"batch_size": 8, "iteration_ms": [1.0]}))
    r = run_tool("--data", str(tmp_path / "set"), "--batch", str(BATCH), str(tmp_path / "b8.json"))
    assert r.returncode != 0 and "ran batch 8, --batch says 4" in r.stderr, r.stderr
