#!/usr/bin/env python3
"""Turns the raw results of bench/run_all.sh, run_robustness.sh and run_sweeps.sh into RESULTS.md and
results.json: every figure beside its target (issue 34's first, then issue 13's), the data sets' shares,
the machine, the date, every version and where the run's time went.

    make_results.py --raw /tmp/conveyor_bench/raw --out OUTDIR

Inputs in --raw: measure.py's JSON files (rows found by their tags: role= and set= for sections 1-2,
sweep=robustness/set=/who= for the robustness sweep, axis=/value=/who= for section 3), gb_*.json
(Google Benchmark), text_*.txt (peer tables), manifest_<set>.tsv (lib.sh `dataset`), machine.txt,
skipped.txt, timings.txt. A missing row is shown as "not run"; a row with an error shows the error's
first line. Raw folders of a run_all.sh before the data sets (section 1 rows without set=) are refused
with a message.
"""
import argparse
import glob
import json
import os
import sys

from results_e2e import SECOND, by_role, e2e_section, legacy, peer_targets, targets
from results_format import brief, fmt, mem, rate, ratio, read_kv, status, verdict
from results_robustness import datasets, robustness
from results_sweeps import sweeps

# Figures measured on the same kind of machine before, on the uniform set's files
# (shared/reference/gpu-machine.md, 2026-11-22).
REFERENCE = {"dali_fused": 23230, "dali_unfused": 20530, "torchvision_gpu": 1655, "dataloader": 4348,
             "dali_overhead": 238, "dali_decode": 21010, "torchvision_decode": 16440}
TARGETS = {"overhead_us": 20.0, "overhead_x": 10.0, "decode": 25000.0, "decode_roi": 30000.0, "staging": 0.90,
           "executor_us": 25.0}
DECODE_SET = SECOND  # decode_gpu_bench's targets (docs/decoding.md) are for the uniform set's files


def load(raw):
    rows, gb, texts = {}, {}, {}
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        name = os.path.basename(path)[:-5]
        try:
            with open(path) as f:
                data = json.load(f)
        except ValueError as e:
            rows[name] = {"error": "unreadable JSON: %s" % e, "tags": {}}
            continue
        if name.startswith("gb_"):
            gb[name[3:]] = data
        else:
            rows[name] = data
    for path in sorted(glob.glob(os.path.join(raw, "text_*.txt"))):
        with open(path) as f:
            texts[os.path.basename(path)[5:-4]] = f.read()
    return rows, gb, texts


def gb_rows(data):
    out = []
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        out.append(b)
    return out


def gb_table(name, data):
    md = ["#### %s" % name, "", "| benchmark | real time | items/s | GB/s | counters |", "| --- | --- | --- | --- | --- |"]
    standard = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "items_per_second",
                "bytes_per_second", "label", "error_occurred", "error_message"}
    for b in gb_rows(data):
        if b.get("error_occurred"):
            md.append("| %s | error: %s | | | |" % (b["name"], b.get("error_message", "")))
            continue
        counters = ", ".join("%s %s" % (k, fmt(v, 2)) for k, v in sorted(b.items())
                             if k not in standard and isinstance(v, (int, float)))
        md.append("| %s | %.3f %s | %s | %s | %s |" % (
            b["name"], b.get("real_time", 0), b.get("time_unit", ""), fmt(b.get("items_per_second")),
            fmt(b["bytes_per_second"] / 1e9, 1) if "bytes_per_second" in b else "—", counters))
    return md + [""]


def gb_find(data, *parts):
    for b in gb_rows(data or {}):
        if all(p in b["name"] for p in parts) and not b.get("error_occurred"):
            return b
    return None


def micros(b):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    return b["real_time"] * scale.get(b.get("time_unit", "ns"), 1e-3)


def decode_table(roles, gb, checks):
    """Decode alone on each set: the pipelines (Conveyor's and DALI's), torchvision, and GpuDecoder
    alone (decode_gpu_bench, judged on the uniform set's files as docs/decoding.md's targets are)."""
    found = {s for (s, r) in roles if s and r in ("conveyor_decode_pipeline", "dali_decode")}
    sets = ["realistic", SECOND] + sorted(found - {"realistic", SECOND})
    md = ["## 2. Decode alone, overhead, staging, kernels", "", "### Decode alone (batch 256)", "",
          "CPU cores busy and GPU memory: %s set. Reference: an H100 before, on the uniform set's files." % sets[0], "",
          "| decoder |" + "".join(" %s images/s |" % s for s in sets) + " reference | CPU cores busy | GPU mem peak MiB |",
          "|" + " --- |" * (len(sets) + 4)]
    for role, what in (("conveyor_decode_pipeline", "Conveyor pipeline: readers.file + decoders.image (gpu)"),
                       ("dali_decode", "DALI 2.4: readers.file + decoders.image (mixed)"),
                       ("dali_decode_engines", "DALI 2.4, decode, hw_decoder_load=1 (engines where they can)"),
                       ("dali_decode_cuda", "DALI 2.4, decode, hw_decoder_load=0 (CUDA backend)"),
                       ("torchvision_decode", "torchvision decode_jpeg(list, device=cuda), files in memory, JPEGs only")):
        cells = []
        for s in sets:
            row = roles.get((s, role))
            r = rate(row)
            cells.append(fmt(r[0]) if r else brief(row))
        row = roles.get((sets[0], role))
        md.append("| %s | %s | %s | %s | %s |" % (what, " | ".join(cells), fmt(REFERENCE.get(role)),
                                                  fmt((row or {}).get("cpu_cores_busy") if rate(row) else None, 2),
                                                  fmt(mem(row, "gpu_mem_peak_mib"))))
    for part, what in (("auto_mix", "GpuDecoder alone, automatic engines/CUDA/CPU mix"),
                       ("engines_only", "GpuDecoder, hardware engines only"), ("cuda_only", "GpuDecoder, CUDA backend only"),
                       ("cpu_only", "GpuDecoder, CPU path only"), ("random_crop_auto", "GpuDecoder, RN50 windows (ROI)")):
        cells = []
        for s in sets:
            dec = gb.get("decode_gpu_bench_" + s)
            b = gb_find(dec, part)
            cells.append(fmt(b.get("items_per_second")) if b else ("not run" if dec is None else "—"))
        md.append("| %s | %s | | | |" % (what, " | ".join(cells)))
    dec = gb.get("decode_gpu_bench_" + DECODE_SET)
    for part, key, what in (("auto_mix", "decode", "decode only"), ("random_crop_auto", "decode_roi", "RN50 windows")):
        b = gb_find(dec, part)
        v = b and b.get("items_per_second")
        checks.append(("Decode alone (%s, %s set) ≥ %s images/s (docs/decoding.md)" % (what, DECODE_SET, fmt(TARGETS[key])),
                       fmt(v), None if v is None else v >= TARGETS[key]))
    return md


def section2(roles, gb, texts, checks):
    md = decode_table(roles, gb, checks)
    md += ["", "### Python iteration overhead: 10 GPU ops at batch 1", "",
           "| pipeline | µs per iteration (median; min–max) | × DALI | target |", "| --- | --- | --- | --- |"]
    dali = roles.get((None, "dali_overhead"))
    dus = None if not dali or "us_per_iteration" not in dali else dali["us_per_iteration"]
    for role, what in (("conveyor_overhead_on", "Conveyor, next(pipe), captured"),
                       ("conveyor_overhead_off", "Conveyor, next(pipe), eager"), ("dali_overhead", "DALI 2.4, pipe.run()")):
        row = roles.get((None, role))
        if not row or "us_per_iteration" not in row:
            md.append("| %s | %s | | |" % (what, status(row)))
            continue
        us = row["us_per_iteration"]
        target = ""
        if role == "conveyor_overhead_on":
            target = "≤ %g µs and ≥ %g× faster than DALI" % (TARGETS["overhead_us"], TARGETS["overhead_x"])
            checks.append(("Python iteration, captured: ≤ %g µs" % TARGETS["overhead_us"], "%.2f µs" % us,
                           us <= TARGETS["overhead_us"]))
            x = ratio(dus, us)
            checks.append(("Python iteration, captured: ≥ %g× faster than DALI's pipe.run()" % TARGETS["overhead_x"],
                           "%s vs %s µs = %s×" % (fmt(us, 2), fmt(dus, 2), fmt(x, 1)),
                           None if x is None else x >= TARGETS["overhead_x"]))
        elif role == "dali_overhead":
            target = "reference on an H100: ≈%d µs" % REFERENCE["dali_overhead"]
        md.append("| %s | %.2f (%.2f–%.2f) | %s | %s |" % (what, us, row["us_per_iteration_min"],
                                                         row["us_per_iteration_max"], fmt(ratio(dus, us), 1), target))
    ex = gb.get("executor_bench")
    md += ["", "### Executor (C++) and staging", ""]
    cap = gb_find(ex, "BM_ExecutorOverhead", "captured:1", "graph_copy:1", "ops:10")
    eager = gb_find(ex, "BM_ExecutorOverhead", "captured:0", "graph_copy:1", "ops:10")
    if cap:
        checks.append(("C++ executor, 10-op batch-1 pipeline captured: ≤ %g µs per iteration" % TARGETS["executor_us"],
                       "%.2f µs (eager %s µs)" % (micros(cap), fmt(eager and micros(eager), 2)),
                       micros(cap) <= TARGETS["executor_us"]))
    st, raw = gb_find(ex, "BM_Staging"), gb_find(ex, "BM_RawPinnedCopy")
    if st and raw and "bytes_per_second" in st and "bytes_per_second" in raw:
        x = st["bytes_per_second"] / raw["bytes_per_second"]
        md.append("Staging 64 MiB per iteration: %.1f GB/s vs a raw pinned copy %.1f GB/s (%.0f%%; target ≥ %.0f%%)." % (
            st["bytes_per_second"] / 1e9, raw["bytes_per_second"] / 1e9, 100 * x, 100 * TARGETS["staging"]))
        md.append("")
        checks.append(("Staging ≥ %.0f%% of a raw pinned copy" % (100 * TARGETS["staging"]), "%.0f%%" % (100 * x),
                       x >= TARGETS["staging"]))
    order = ["executor_bench"] + sorted(n for n in gb if n.startswith("decode_gpu_bench")) + \
        ["pointwise_bench", "geometry_bench"]
    for name in order + sorted(set(gb) - set(order)):
        if name in gb:
            md += gb_table(name, gb[name])
    for name, text in sorted(texts.items()):
        md += ["#### %s (PyTorch peers of the kernels)" % name, "", "```", text.strip()[-6000:], "```", ""]
    return md


def versions(rows):
    out = {}
    for row in rows.values():
        for k, v in (row.get("versions") or {}).items():
            if k != "library" and not str(v).startswith("unavailable"):
                out.setdefault(k, set()).add(str(v))
    return {k: ", ".join(sorted(v)) for k, v in sorted(out.items())}


def timings(raw):
    """[(part, "N s")] from timings.txt in first-seen order, the last value of a part repeated."""
    out = {}
    path = os.path.join(raw, "timings.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.rpartition(":")
                if sep and key.strip():
                    out[key.strip()] = value.strip()
    return list(out.items())


def target_table(title, intro, checks):
    md = ["## " + title, ""] + ([intro, ""] if intro else []) + ["| target | measured | status |", "| --- | --- | --- |"]
    return md + ["| %s | %s | %s |" % (c["target"], c["measured"], verdict(c["met"])) for c in checks] + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows, gb, texts = load(args.raw)
    old = legacy(rows)
    if old:
        sys.exit("make_results.py: %s holds section 1-2 rows without a data set (%s%s): they come from a run_all.sh "
                 "before the realistic and uniform sets (issue 34), which this make_results.py no longer reads. Use "
                 "the make_results.py of that run's commit (git log -- bench/make_results.py), or run run_all.sh "
                 "again." % (args.raw, ", ".join(old[:3]), ", ..." if len(old) > 3 else ""))
    roles = by_role(rows)
    machine = read_kv(os.path.join(args.raw, "machine.txt"))
    vers = versions(rows)
    e2e_md, headline = e2e_section(roles)
    robust_md, robust_checks, robust_figures = robustness(rows)
    sets_md, set_stats = datasets(args.raw)
    first, last = targets(roles)
    issue34 = first + robust_checks + last
    checks13 = []
    section2_md = section2(roles, gb, texts, checks13)
    issue13 = peer_targets(roles) + [{"target": n, "measured": v, "met": ok} for n, v, ok in checks13]
    md = ["# Conveyor benchmarks (issues 13 and 34)", "",
          "Written by `bench/make_results.py` from one run of `bench/run_all.sh` and `bench/run_robustness.sh` "
          "(and `bench/run_sweeps.sh` where section 3 has figures). The headline is the realistic set (an "
          "ImageNet-like mix); the uniform set (2,048 identical-looking 500x375 q90 photos) is the second column, "
          "never the headline.", "",
          "| | |", "| --- | --- |"]
    for key in ("date_utc", "gpu", "cuda_driver_api", "cpu", "memory", "kernel", "python", "conveyor_commit",
                "suite_commit"):
        if key in machine:
            md.append("| %s | %s |" % (key.replace("_", " "), machine[key]))
    for k, v in vers.items():
        md.append("| %s | %s |" % ("python (each contender's)" if k == "python" else k, v))
    md += ["", "How: every contender runs in its own process, one after another, on the same files (page cache warm); "
           "an untimed first epoch plus warm-up iterations, then timed blocks whose last batch is waited for on the "
           "host; figures are medians of the blocks (of the processes' medians where a row ran in several). Memory "
           "is measured from outside the process (bench/e2e/measure.py) the same way for every library.", ""]
    md += target_table("Targets (issue 34)", "Realistic set unless named; ratios against DALI measured in the same "
                       "run; the robustness rows against the `varied` base of the same sweep.", issue34)
    md += target_table("Other targets (issue 13)", "", issue13)
    md += e2e_md + robust_md + sets_md + section2_md + sweeps(rows)
    spent = timings(args.raw)
    if spent:
        md += ["## Where the time went", "", "From the scripts' `phase` marks ($RAW/timings.txt): each part's seconds "
               "on this machine, to set beside the estimates in the scripts' headers. A data line counts inside the "
               "part that follows it.", "", "| part | time |", "| --- | --- |"]
        md += ["| %s | %s |" % kv for kv in spent] + [""]
    skipped = os.path.join(args.raw, "skipped.txt")
    problems = [(name, status(row)) for name, row in sorted(rows.items()) if status(row)]
    if problems or os.path.exists(skipped):
        md += ["## Not measured in this run", ""] + ["- %s: %s" % p for p in problems]
        if os.path.exists(skipped):
            with open(skipped) as f:
                md += ["- " + line.strip() for line in f if line.strip()]
        md.append("")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    checks = [dict(c, issue=34) for c in issue34] + [dict(c, issue=13) for c in issue13]
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"machine": machine, "versions": vers, "targets": checks, "headline": headline,
                   "robustness": robust_figures, "datasets": set_stats, "timings": dict(spent),
                   "rows": rows, "google_benchmark": gb}, f, indent=1, sort_keys=True)
    met = [c["met"] for c in checks if c["met"] is not None]
    print("make_results: %d targets measured, %d met; %s" % (len(met), sum(met), os.path.join(args.out, "RESULTS.md")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
