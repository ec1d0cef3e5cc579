#!/usr/bin/env python3
"""Each timed iteration of `conveyor bench --json` beside its batch's content: which files the
pipeline's file reader gave that iteration (the readers' order replayed on the CPU with the same
seed, batch size and reader name: the order does not depend on the device), their properties from
the data set's MANIFEST.tsv (tools/make_test_images), and the iteration's wall time
(`iteration_ms`) and decoder call time (`decoder_call_ms`). Prints, per bench JSON, how the time
goes with each property (Pearson r, the mean by the batch's count of large photos) and the slowest
iterations; writes one TSV row per iteration with --tsv.

    batch_costs.py --data DIR [--seed 1234] [--batch 256] [--reader reader] [--tsv OUT] BENCH.json...

DIR holds the files as the reader saw them (DIR/0/*.jpg and DIR/0/MANIFEST.tsv, bench/lib.sh's
`dataset`). Files are matched by their bytes (SHA-1), so the replay reads the real files. Needs the
conveyor Python package (CONVEYOR_LIB, PYTHONPATH; no GPU).
"""
import argparse
import hashlib
import json
import os
import statistics
import sys

LARGE_PX = 3000  # long side of a "large" photo, as the data sets' table counts them


def manifest(data):
    rows, path = {}, os.path.join(data, "0", "MANIFEST.tsv")
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                r = dict(zip(header, line.rstrip("\n").split("\t")))
                rows[r["name"]] = r
    return rows


def by_hash(data, names):
    out = {}
    for n in names:
        with open(os.path.join(data, "0", n), "rb") as f:
            out[hashlib.sha1(f.read()).hexdigest()] = n
    return out


def replay(data, seed, batch, reader, iterations):
    """The reader's file order for `iterations` batches, as lists of SHA-1s of the samples' bytes."""
    import numpy as np
    import conveyor
    yaml = ("pipeline: {name: batch_costs, batch_size: %d, device: cpu, num_threads: 2, seed: %d}\n"
            "ops:\n  - {op: readers.file, name: %s, args: {file_root: %s, random_shuffle: true}, "
            "outputs: [bytes, labels]}\noutputs: [bytes]\n" % (batch, seed, reader, json.dumps(data)))
    pipe = conveyor.Pipeline.from_yaml(yaml)
    pipe.build()
    order = []
    for _ in range(iterations):
        samples = pipe.next_batch(ragged="list")["bytes"]
        if not isinstance(samples, list):  # every sample the same size: one dense tensor
            samples = list(np.from_dlpack(samples))  # numpy rows: from_dlpack takes them as they are
        order.append([hashlib.sha1(np.from_dlpack(s).tobytes()).hexdigest() for s in samples])
    pipe.close()
    return order


def features(names, rows):
    """Per batch: files, megapixels, the largest photo's, large photos, progressive, not 4:2:0, unknown."""
    f = dict(files=len(names), mpx=0.0, max_mpx=0.0, large=0, progressive=0, not_420=0, unknown=0)
    for n in names:
        r = rows.get(n)
        if r is None:
            f["unknown"] += 1
            continue
        w, h = int(r["width"]), int(r["height"])
        f["mpx"] += w * h / 1e6
        f["max_mpx"] = max(f["max_mpx"], w * h / 1e6)
        f["large"] += max(w, h) >= LARGE_PX
        f["progressive"] += r.get("progressive") == "1"
        f["not_420"] += r.get("format") == "jpeg" and r.get("subsampling") != "420"
    return f


def pearson(x, y):
    if len(x) < 3 or statistics.pstdev(x) == 0 or statistics.pstdev(y) == 0:
        return float("nan")
    mx, my = statistics.fmean(x), statistics.fmean(y)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y)) / len(x)
    return cov / (statistics.pstdev(x) * statistics.pstdev(y))


def report(label, per_it, out):
    keys = ["mpx", "max_mpx", "large", "progressive", "not_420"]
    ms = [p["iteration_ms"] for p in per_it]
    print("%s: %d iterations, iteration_ms median %.2f, max %.2f" % (label, len(ms), statistics.median(ms), max(ms)),
          file=out)
    for target in ("iteration_ms", "decoder_call_ms"):
        ys = [p.get(target) for p in per_it]
        if any(y is None for y in ys):
            continue
        print("  %s: r with %s" % (target, ", ".join("%s %.2f" % (k, pearson([p[k] for p in per_it], ys))
                                                      for k in keys)), file=out)
    groups = {}
    for p in per_it:
        groups.setdefault(min(p["large"], 5), []).append(p["iteration_ms"])
    print("  iteration_ms by large photos in the batch: " + ", ".join(
        "%s%d: %.2f (%d)" % ("" if k < 5 else ">=", k, statistics.fmean(v), len(v)) for k, v in sorted(groups.items())),
        file=out)
    for p in sorted(per_it, key=lambda p: -p["iteration_ms"])[:5]:
        print("  slow: iteration %d %.2f ms (decoder %s): %.0f Mpx, largest %.1f, large %d, progressive %d, "
              "not 4:2:0 %d" % (p["iteration"], p["iteration_ms"], "%.2f" % p["decoder_call_ms"]
                                if p.get("decoder_call_ms") is not None else "-", p["mpx"], p["max_mpx"], p["large"],
                                p["progressive"], p["not_420"]), file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--reader", default="reader")
    ap.add_argument("--tsv")
    ap.add_argument("bench", nargs="+")
    a = ap.parse_args(argv)
    runs = []
    for path in a.bench:
        with open(path) as f:
            j = json.load(f)
        if "iteration_ms" not in j:
            sys.exit("batch_costs: %s has no iteration_ms (a conveyor bench --json of before it?)" % path)
        if j.get("batch_size", a.batch) != a.batch:
            sys.exit("batch_costs: %s ran batch %s, --batch says %d" % (path, j.get("batch_size"), a.batch))
        runs.append((path, j))
    rows = manifest(a.data)
    names = by_hash(a.data, rows)
    longest = max(int(j.get("warmup", 0)) + len(j["iteration_ms"]) for _, j in runs)
    order = replay(a.data, a.seed, a.batch, a.reader, longest)
    tsv = open(a.tsv, "w") if a.tsv else None
    if tsv:
        tsv.write("bench\titeration\titeration_ms\tdecoder_call_ms\tfiles\tmpx\tmax_mpx\tlarge\tprogressive\tnot_420\n")
    for path, j in runs:
        warmup, calls = int(j.get("warmup", 0)), j.get("decoder_call_ms")
        per_it = []
        for i, ms in enumerate(j["iteration_ms"]):
            p = features([names.get(h, h) for h in order[warmup + i]], rows)
            p.update(iteration=warmup + i, iteration_ms=ms, decoder_call_ms=calls[i] if calls else None)
            per_it.append(p)
            if tsv:
                tsv.write("%s\t%d\t%.2f\t%s\t%d\t%.2f\t%.2f\t%d\t%d\t%d\n" % (
                    os.path.basename(path), p["iteration"], ms, "" if calls is None else "%.2f" % calls[i],
                    p["files"], p["mpx"], p["max_mpx"], p["large"], p["progressive"], p["not_420"]))
        report(os.path.basename(path), per_it, sys.stdout)
    if tsv:
        tsv.close()


if __name__ == "__main__":
    main()
