#!/usr/bin/env python3
"""Summarises cupti_trace's files (<prefix>.api.tsv, .slow.tsv, .gpu.tsv) over the steady state.

  summarize.py PREFIX [--skip-fraction 0.3]

GPU: busy time (union of kernels, copies, memsets) over the window, per stream, kernels by total
time, copies by direction and memory kinds (pageable host copies block the calling thread).
Host: the slow API calls (>= the tracer's threshold) in the window by function and thread group.
"""
import argparse
import collections
import csv
import re

MEM = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed", 6: "device_static",
       7: "managed_static"}
COPY = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP"}


def rows(path):
    with open(path, newline="") as f:
        yield from csv.DictReader(f, delimiter="\t")


def union(intervals):
    total, end = 0, -1
    for s, e in sorted(intervals):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def group(thread):
    return re.sub(r"[-_ ]?\d+$", "", thread.split("/")[0]) or "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--skip-fraction", type=float, default=0.3)
    a = ap.parse_args()
    gpu = [r for r in rows(a.prefix + ".gpu.tsv")]
    for r in gpu:
        r["s"], r["e"] = int(r["start_ns"]), int(r["end_ns"])
    t0, t1 = min(r["s"] for r in gpu), max(r["e"] for r in gpu)
    w0 = t0 + int((t1 - t0) * a.skip_fraction)
    win = [r for r in gpu if r["s"] >= w0]
    span = t1 - w0
    print(f"window: {span / 1e6:.1f} ms of {(t1 - t0) / 1e6:.1f} ms of GPU activity (first {a.skip_fraction:.0%} skipped)")
    print(f"GPU busy (any stream): {union([(r['s'], r['e']) for r in win]) / span:.1%}")
    by_stream = collections.defaultdict(list)
    for r in win:
        by_stream[r["stream"]].append((r["s"], r["e"]))
    print("streams by busy time:")
    for st, iv in sorted(by_stream.items(), key=lambda kv: -union(kv[1]))[:12]:
        print(f"  stream {st:>6}: {union(iv) / span:6.1%}  {len(iv):7d} ops")
    kern = collections.defaultdict(lambda: [0, 0])
    for r in win:
        if r["kind"] == "K":
            name = r["name"][:90]
            kern[name][0] += 1
            kern[name][1] += r["e"] - r["s"]
    print("kernels by total time (ms, count, mean us):")
    for name, (n, t) in sorted(kern.items(), key=lambda kv: -kv[1][1])[:25]:
        print(f"  {t / 1e6:9.1f} {n:7d} {t / n / 1e3:9.1f}  {name}")
    cp = collections.defaultdict(lambda: [0, 0, 0])
    for r in win:
        if r["kind"] in "CS":
            key = ("memset" if r["kind"] == "S" else
                   f"{COPY.get(int(r['copy_kind']), r['copy_kind'])} {MEM.get(int(r['src_kind']))}->{MEM.get(int(r['dst_kind']))}")
            cp[key][0] += 1
            cp[key][1] += int(r["bytes"])
            cp[key][2] += r["e"] - r["s"]
    print("copies (count, MB, ms, GB/s):")
    for key, (n, b, t) in sorted(cp.items(), key=lambda kv: -kv[1][2]):
        print(f"  {key:32s} {n:7d} {b / 1e6:10.1f} {t / 1e6:8.1f} {b / max(t, 1):8.1f}")
    slow = [r for r in rows(a.prefix + ".slow.tsv") if int(r["start_ns"]) >= w0]
    agg = collections.defaultdict(lambda: [0, 0])
    for r in slow:
        key = (group(r["thread"]), r["function"])
        agg[key][0] += 1
        agg[key][1] += int(r["duration_ns"])
    print("slow host API calls in the window (thread group, function: count, total ms, mean ms):")
    for (g, fn), (n, t) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:30]:
        print(f"  {g:20s} {fn:40s} {n:6d} {t / 1e6:9.1f} {t / n / 1e6:7.2f}")
    api = collections.defaultdict(lambda: [0, 0, 0])
    for r in rows(a.prefix + ".api.tsv"):
        key = (group(r["thread"]), r["function"])
        api[key][0] += int(r["count"])
        api[key][1] += int(r["total_ns"])
        api[key][2] = max(api[key][2], int(r["max_ns"]))
    print("all API calls of the run (thread group, function: count, total ms, max ms), top 40 by total:")
    for (g, fn), (n, t, m) in sorted(api.items(), key=lambda kv: -kv[1][1])[:40]:
        print(f"  {g:20s} {fn:40s} {n:8d} {t / 1e6:9.1f} {m / 1e6:7.2f}")


if __name__ == "__main__":
    main()
