#!/usr/bin/env python3
"""Turns the raw results of bench/run_all.sh and bench/run_sweeps.sh into RESULTS.md and
results.json: every figure beside its target from issue 13, the machine, the date and every version.

    make_results.py --raw /tmp/conveyor_bench/raw --out OUTDIR

Inputs in --raw: measure.py's JSON files (rows found by their tags: role=..., axis=/value=/who= for
sweeps), gb_*.json (Google Benchmark), text_*.txt (peer tables), machine.txt, skipped.txt.
A missing row is shown as "not run"; a row with an error shows the error's first line.
"""
import argparse
import glob
import json
import os
import statistics

from results_format import fmt, mem, rate, ratio, status, verdict
from results_sweeps import sweeps

# role -> (what, kind): kind pairs a Conveyor row with its DALI peer.
E2E = [
    ("conveyor_py_fused_on", "Conveyor, Python loop: fused ROI decode + resize, graph capture on", "fused"),
    ("conveyor_py_fused_off", "Conveyor, Python loop: fused ROI decode + resize, capture off", "fused"),
    ("conveyor_py_unfused_on", "Conveyor, Python loop: decode + random_resized_crop, capture on", "unfused"),
    ("conveyor_py_unfused_off", "Conveyor, Python loop: decode + random_resized_crop, capture off", "unfused"),
    ("conveyor_cli_fused_on", "Conveyor, C++ (`conveyor bench`): fused, capture on", "fused"),
    ("conveyor_cli_fused_off", "Conveyor, C++ (`conveyor bench`): fused, capture off", "fused"),
    ("conveyor_cli_unfused_on", "Conveyor, C++ (`conveyor bench`): unfused, capture on", "unfused"),
    ("conveyor_cli_unfused_off", "Conveyor, C++ (`conveyor bench`): unfused, capture off", "unfused"),
    ("dali_fused", "DALI 2.4: decoders.image_random_crop (mixed) + resize + crop_mirror_normalize", "fused"),
    ("dali_unfused", "DALI 2.4: decoders.image (mixed) + random_resized_crop + crop_mirror_normalize", "unfused"),
    ("torchvision_gpu", "torchvision GPU: batched decode_jpeg(cuda) + per-image v2 RandomResizedCrop/flip, "
     "batched normalize", None),
    ("dataloader", "PyTorch DataLoader: 15 workers, v2 CPU transforms, pin_memory", None),
]
# Figures measured on the same kind of machine before (shared/reference/gpu-machine.md, 2026-11-22).
REFERENCE = {"dali_fused": 23230, "dali_unfused": 20530, "torchvision_gpu": 1655, "dataloader": 4348,
             "dali_overhead": 238, "dali_decode": 21010, "torchvision_decode": 16440}
TARGETS = {"dali": 1.25, "torchvision": 10.0, "dataloader": 5.0, "overhead_us": 20.0, "overhead_x": 10.0,
           "decode": 25000.0, "decode_roi": 30000.0, "staging": 0.90, "executor_us": 25.0}


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


def read_kv(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    out[key.strip()] = value.strip()
    return out


def by_role(rows):
    """role -> its row; a role measured in several processes (run_all.sh --processes) -> one row
    combined from them (combine)."""
    groups = {}
    for name in sorted(rows):
        role = rows[name].get("tags", {}).get("role")
        if role:
            groups.setdefault(role, []).append(rows[name])
    return {role: combine(group) for role, group in groups.items()}


def combine(group):
    """One row from the processes that measured a role: images/s the median of the processes'
    medians (min and max over every block), CPU busy and the stage split of the median process,
    memory peaks the largest. A process that failed is left out while another succeeded; the
    row lists each process's median ("processes"). One process: its row unchanged."""
    ok = [r for r in group if rate(r) is not None]
    if len(group) == 1 or not ok:
        return group[0]
    ok.sort(key=lambda r: rate(r)[0])
    middle = ok[(len(ok) - 1) // 2]
    rates = [rate(r) for r in ok]
    out = {k: v for k, v in middle.items() if k not in ("images_per_s", "images_per_s_min", "images_per_s_max",
                                                          "samples_per_s", "measure")}
    out["images_per_s"] = statistics.median(r[0] for r in rates)
    out["images_per_s_min"] = min(r[1] if r[1] is not None else r[0] for r in rates)
    out["images_per_s_max"] = max(r[2] if r[2] is not None else r[0] for r in rates)
    out["processes"] = [r[0] for r in rates]
    out["processes_failed"] = len(group) - len(ok)
    peaks = {}
    for r in ok:
        for key, value in (r.get("measure") or {}).items():
            if isinstance(value, (int, float)) and key.endswith("_peak_mib"):
                peaks[key] = max(peaks.get(key, value), value)
    out["measure"] = dict(middle.get("measure") or {}, **peaks)
    return out


def e2e_section(roles, checks):
    md = ["## 1. End to end", "",
          "Same files, batch 256, 224x224 float16 CHW normalized, random horizontal flip, RandomResizedCrop-style "
          "windows (area [0.08, 1], aspect [3/4, 4/3]). Images/s: median of the timed blocks (min–max); a row "
          "measured in several processes (the compared pairs: their decoders' speed differs per process) gives "
          "the median of the processes' medians, each process's median listed, min–max over all blocks. CPU cores "
          "busy: process CPU time / wall over the timed blocks (Python rows; the C++ rows over the whole process). "
          "GPU memory: NVML device memory used above the idle reading (context included). Host memory: PSS summed "
          "over the process and its workers.", "",
          "| pipeline | images/s | × DALI (same kind) | × torchvision GPU | × DataLoader | CPU cores busy | "
          "GPU mem peak MiB | host mem peak MiB | target |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    tv = rate(roles.get("torchvision_gpu"))
    dl = rate(roles.get("dataloader"))
    for role, what, kind in E2E:
        row = roles.get(role)
        r = rate(row)
        if r is None:
            md.append("| %s | %s | | | | | | | |" % (what, status(row)))
            continue
        dali = roles.get("dali_" + kind) if kind else None
        dr = rate(dali)
        target = ""
        xd = xt = xl = None
        if role.startswith("conveyor"):
            xd, xt, xl = ratio(r[0], dr and dr[0]), ratio(r[0], tv and tv[0]), ratio(r[0], dl and dl[0])
            gm, dgm = mem(row, "gpu_mem_peak_mib"), mem(dali, "gpu_mem_peak_mib")
            target = "≥ %g× DALI: %s; ≥ %g× tv: %s; ≥ %g× DL: %s; GPU mem ≤ DALI's: %s" % (
                TARGETS["dali"], verdict(None if xd is None else xd >= TARGETS["dali"]),
                TARGETS["torchvision"], verdict(None if xt is None else xt >= TARGETS["torchvision"]),
                TARGETS["dataloader"], verdict(None if xl is None else xl >= TARGETS["dataloader"]),
                verdict(None if gm is None or dgm is None else gm <= dgm))
        elif role in REFERENCE:
            target = "reference on an H100: ≈%s" % fmt(REFERENCE[role])
        stages = ""
        if len(row.get("processes", [])) > 1:
            stages = "<br>%d processes: %s" % (len(row["processes"]), " / ".join(fmt(x) for x in row["processes"]))
            if row.get("processes_failed"):
                stages += " (%d failed)" % row["processes_failed"]
        if "ms_per_iteration" in row:
            s = row["ms_per_iteration"]
            stages += "<br>ms/it: CPU stage %.2f, GPU issue %.2f, GPU wait %.2f, idle %.2f" % (
                s["cpu_stage"], s["gpu_issue"], s["gpu_wait"], s["idle"])
        if "decoder_mix" in row and "decoder_ms_per_call" in row:  # `conveyor bench --json`
            m, d = row["decoder_mix"], row["decoder_ms_per_call"]
            stages += "<br>decoder call %.2f ms: engines %.0f%% (batch %.2f ms host, %.2f GPU), CUDA backend %.2f ms" % (
                d["call"], 100 * m["engines_share"], m["engines_host_ms_per_batch"], m["engines_gpu_ms_per_batch"],
                m["cuda_ms_per_call"])
        md.append("| %s%s | %s (%s–%s) | %s | %s | %s | %s | %s | %s | %s |" % (
            what, stages, fmt(r[0]), fmt(r[1]), fmt(r[2]), fmt(xd, 2), fmt(xt, 1), fmt(xl, 1),
            fmt(row.get("cpu_cores_busy"), 2), fmt(mem(row, "gpu_mem_peak_mib")),
            fmt(mem(row, "host_mem_peak_mib")), target))
    for kind in ("fused", "unfused"):
        row, dali = roles.get("conveyor_py_%s_on" % kind), roles.get("dali_" + kind)
        r, dr = rate(row), rate(dali)
        x = ratio(r and r[0], dr and dr[0])
        checks.append(("End to end, %s: Conveyor (Python, capture on) ≥ %.2f× DALI 2.4" % (kind, TARGETS["dali"]),
                       "%s vs %s images/s = %s×" % (fmt(r and r[0]), fmt(dr and dr[0]), fmt(x, 2)),
                       None if x is None else x >= TARGETS["dali"]))
        gm, dgm = mem(row, "gpu_mem_peak_mib"), mem(dali, "gpu_mem_peak_mib")
        checks.append(("GPU memory peak, %s: Conveyor ≤ DALI" % kind, "%s vs %s MiB" % (fmt(gm), fmt(dgm)),
                       None if gm is None or dgm is None else gm <= dgm))
    r = rate(roles.get("conveyor_py_fused_on"))
    for peer, key, name in ((tv, "torchvision", "torchvision GPU pipeline"), (dl, "dataloader", "DataLoader")):
        x = ratio(r and r[0], peer and peer[0])
        checks.append(("End to end: Conveyor ≥ %g× the %s" % (TARGETS[key], name),
                       "%s vs %s images/s = %s×" % (fmt(r and r[0]), fmt(peer and peer[0]), fmt(x, 1)),
                       None if x is None else x >= TARGETS[key]))
    return md


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


def section2(roles, gb, texts, checks):
    md = ["## 2. Decode alone, overhead, staging, kernels", "", "### Decode alone (batch 256, same files)", "",
          "| decoder | images/s | reference | CPU cores busy | GPU mem peak MiB |", "| --- | --- | --- | --- | --- |"]
    for role, what in (("conveyor_decode_pipeline", "Conveyor pipeline: readers.file + decoders.image (gpu)"),
                       ("dali_decode", "DALI 2.4: readers.file + decoders.image (mixed)"),
                       ("dali_decode_engines", "DALI 2.4, decode, hw_decoder_load=1 (engines where they can)"),
                       ("dali_decode_cuda", "DALI 2.4, decode, hw_decoder_load=0 (CUDA backend)"),
                       ("torchvision_decode", "torchvision decode_jpeg(list, device=cuda), files in memory")):
        row = roles.get(role)
        r = rate(row)
        md.append("| %s | %s | %s | %s | %s |" % (what, fmt(r[0]) if r else status(row),
                                                  fmt(REFERENCE.get(role)), fmt((row or {}).get("cpu_cores_busy"), 2),
                                                  fmt(mem(row, "gpu_mem_peak_mib"))))
    dec = gb.get("decode_gpu_bench")
    for part, what in (("auto_mix", "GpuDecoder alone, automatic engines/CUDA/CPU mix"),
                       ("engines_only", "GpuDecoder, hardware engines only"), ("cuda_only", "GpuDecoder, CUDA backend only"),
                       ("cpu_only", "GpuDecoder, CPU path only"), ("random_crop_auto", "GpuDecoder, RN50 windows (ROI)")):
        b = gb_find(dec, part)
        md.append("| %s | %s | | | |" % (what, fmt(b and b.get("items_per_second")) if b else "not run"))
    for part, key, what in (("auto_mix", "decode", "decode only"), ("random_crop_auto", "decode_roi", "RN50 windows")):
        b = gb_find(dec, part)
        v = b and b.get("items_per_second")
        checks.append(("Decode alone (%s) ≥ %s images/s (docs/decoding.md)" % (what, fmt(TARGETS[key])), fmt(v),
                       None if v is None else v >= TARGETS[key]))
    md += ["", "### Python iteration overhead: 10 GPU ops at batch 1", "",
           "| pipeline | µs per iteration (median; min–max) | × DALI | target |", "| --- | --- | --- | --- |"]
    dali = roles.get("dali_overhead")
    dus = None if not dali or "us_per_iteration" not in dali else dali["us_per_iteration"]
    for role, what in (("conveyor_overhead_on", "Conveyor, next(pipe), captured"),
                       ("conveyor_overhead_off", "Conveyor, next(pipe), eager"), ("dali_overhead", "DALI 2.4, pipe.run()")):
        row = roles.get(role)
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
    for name in ("executor_bench", "decode_gpu_bench", "pointwise_bench", "geometry_bench"):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows, gb, texts = load(args.raw)
    roles = by_role(rows)
    machine = read_kv(os.path.join(args.raw, "machine.txt"))
    vers = versions(rows)
    checks = []
    body = e2e_section(roles, checks) + [""] + section2(roles, gb, texts, checks) + sweeps(rows)
    md = ["# Conveyor benchmarks (issue 13)", "",
          "Written by `bench/make_results.py` from one run of `bench/run_all.sh` (and `bench/run_sweeps.sh` where "
          "section 3 has figures).", "",
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
           "is measured from outside the process (bench/e2e/measure.py) the same way for every library.", "", "## Targets", "", "| target | measured | status |",
           "| --- | --- | --- |"]
    md += ["| %s | %s | %s |" % (name, value, verdict(ok)) for name, value, ok in checks]
    md += [""] + body
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
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"machine": machine, "versions": vers,
                   "targets": [{"target": n, "measured": v, "met": ok} for n, v, ok in checks],
                   "rows": rows, "google_benchmark": gb}, f, indent=1, sort_keys=True)
    met = [ok for _, _, ok in checks if ok is not None]
    print("make_results: %d targets measured, %d met; %s" % (len(met), sum(met), os.path.join(args.out, "RESULTS.md")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
