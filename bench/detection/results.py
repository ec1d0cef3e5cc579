#!/usr/bin/env python3
"""The detection benchmark's raw results (run.sh's $WORK/detection/raw) → RESULTS.md + results.json.

    results.py --raw DIR --out DIR     # the pages
    results.py --raw DIR --behind      # prints "ok" when Conveyor's C++ row reaches 1.25x DALI's best,
                                       # else "behind (R)" or "unknown (why)": run.sh's ablation switch

Rows are measure.py's JSON files; a row's figures: images/s median of its blocks, its slowest block
(min) and fastest; a contender's figure over processes: the median of its processes' medians, and the
slowest block of all. Ratios are Conveyor / DALI measured in the same run. Target (issue 37):
Conveyor's detection pipeline >= 1.25x DALI's equivalent — judged against DALI's best mode here
(fused decoders.image_slice or unfused decoders.image + slice, whichever is faster), and shown against
both.
"""
import argparse
import glob
import json
import os
import statistics
import sys

TARGET = 1.25
WHO = [("conveyor_cli", "Conveyor, `conveyor bench` (C++)"),
       ("conveyor_loader", "Conveyor, Python (`conveyor.torch.Loader`, torch tensors)"),
       ("dali_unfused", "DALI 2.4, decoders.image + slice (Conveyor's operators)"),
       ("dali_fused", "DALI 2.4, decoders.image_slice (fused: decodes the window only)"),
       ("dali_fused_gpuenc", "DALI 2.4, fused, box_encoder on the GPU (as Conveyor's)")]
ABLATION = [("conveyor_detail", "full pipeline, CONVEYOR_ISSUE_DETAIL=1"),
            ("conveyor_no_encoder", "without box_encoder"),
            ("conveyor_decode_only", "readers.coco + decoders.image only")]


def load_rows(raw):
    rows = {}
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name == "annotations":
            continue
        try:
            with open(path) as f:
                rows[name] = json.load(f)
        except ValueError as e:
            rows[name] = {"error": "unreadable JSON: %s" % e}
    return rows


def rates(row):
    """(median, slowest block, fastest block) images/s, or None for an error/skip."""
    if "images_per_s" in row:
        return row["images_per_s"], row["images_per_s_min"], row["images_per_s_max"]
    s = row.get("samples_per_s")
    if isinstance(s, dict) and "median" in s:
        return s["median"], s["min"], s["max"]
    return None


def group(rows, prefix):
    """The rows of one contender (name, or name_pN for process N) that have figures."""
    return [(n, r) for n, r in sorted(rows.items()) if (n == prefix or n.startswith(prefix + "_p")) and rates(r)]


def summary(rows):
    out = {}
    for key, what in WHO:
        got = group(rows, key)
        if got:
            medians = [rates(r)[0] for _, r in got]
            if key == "conveyor_loader":  # the smoke run loops conveyor.Pipeline (no torch there)
                what = "Conveyor, Python (`%s`)" % got[0][1].get("via", "conveyor.torch.Loader")
            out[key] = {"what": what, "processes": len(got), "images_per_s": round(statistics.median(medians), 1),
                        "slowest_block": round(min(rates(r)[1] for _, r in got), 1),
                        "process_medians": [round(m, 1) for m in medians]}
    dali = [out[k] for k in ("dali_fused", "dali_unfused", "dali_fused_gpuenc") if k in out]
    best = max(dali, key=lambda d: d["images_per_s"]) if dali else None
    for key in ("conveyor_cli", "conveyor_loader"):
        if key not in out:
            continue
        for dk in ("dali_unfused", "dali_fused", "dali_fused_gpuenc"):
            if dk in out:
                out[key]["ratio_to_" + dk] = round(out[key]["images_per_s"] / out[dk]["images_per_s"], 3)
                out[key]["slowest_ratio_to_" + dk] = round(out[key]["slowest_block"] / out[dk]["slowest_block"], 3)
        if best:
            out[key]["ratio_to_dali_best"] = round(out[key]["images_per_s"] / best["images_per_s"], 3)
    return out, best


def behind(raw):
    rows = load_rows(raw)
    s, best = summary(rows)
    if "conveyor_cli" not in s:
        return "unknown (no Conveyor C++ figure)"
    if best is None:
        return "unknown (no DALI figure)"
    r = s["conveyor_cli"]["ratio_to_dali_best"]
    return "ok" if r >= TARGET else "behind (%.2f)" % r


def read(raw, name):
    try:
        with open(os.path.join(raw, name)) as f:
            return f.read().strip()
    except OSError:
        return ""


def fmt(v, digits=1):
    return "—" if v is None else ("%.*f" % (digits, v) if isinstance(v, float) else str(v))


def row_line(name, r):
    got = rates(r)
    m = r.get("measure", {})
    if not got:
        why = r.get("skipped") or (r.get("error", "no figures").splitlines() or ["?"])[0]
        return "| %s | %s | — | — | — | — | — | %s |" % (name, r.get("tags", {}).get("process", ""), why[:160])
    med, lo, hi = got
    return "| %s | %s | %.0f | %.0f | %.0f | %s | %s | %s |" % (
        name, r.get("tags", {}).get("process", ""), med, lo, hi, fmt(m.get("gpu_mem_peak_mib")),
        fmt(r.get("cpu_cores_busy"), 2), fmt(m.get("host_mem_peak_mib")))


def stage_lines(name, r):
    """Conveyor's C++ rows: where the stage thread's time went, GPU issue parts, decoder split, pools."""
    lines = []
    st = r.get("ms_per_iteration")
    if st:
        lines.append("- `%s`: ms per iteration: CPU stage %.3f, GPU issue %.3f, GPU wait %.3f, idle %.3f" % (
            name, st.get("cpu_stage", 0), st.get("gpu_issue", 0), st.get("gpu_wait", 0), st.get("idle", 0)))
    parts = r.get("gpu_issue_parts_ms")
    if parts:
        lines.append("  - GPU issue by part (ms/iteration): " + "; ".join("%s %.3f" % kv for kv in parts.items()))
    mix = r.get("decoder_mix")
    if mix:
        lines.append("  - decoder, images per call: engines %.1f / CUDA %.1f / CPU %.1f; engines' share %.0f%%" % (
            mix.get("engines_images_per_call", 0), mix.get("cuda_images_per_call", 0),
            mix.get("cpu_images_per_call", 0), 100 * mix.get("engines_share", 0)))
    dec = r.get("decoder_ms_per_call")
    if dec:
        lines.append("  - decoder ms per call: whole %.3f (slot wait %.3f, classify %.3f, engines + CUDA %.3f, CPU "
                     "path %.3f)" % (dec.get("call", 0), dec.get("slot_wait", 0), dec.get("classify", 0),
                                     dec.get("decode", 0), dec.get("cpu_path", 0)))
    mem = r.get("memory_mib")
    if mem:
        lines.append("  - our pools: device peak in use %.1f MiB, from the driver %.1f MiB; pinned %.1f / %.1f MiB" % (
            mem.get("device_peak_in_use", 0), mem.get("device_from_driver", 0), mem.get("pinned_peak_in_use", 0),
            mem.get("pinned_from_driver", 0)))
    return lines


def page(raw, rows, s, best):
    machine = read(raw, "machine.txt")
    gpu = next((l.split(":", 1)[1].strip() for l in machine.splitlines() if l.startswith("gpu:")), "no GPU seen")
    md = ["# Detection benchmark (issue 37): Conveyor beside DALI 2.4, SSD300 training input", "",
          "Device: **%s**. Same files, same run; each row one process under bench/e2e/measure.py." % gpu, ""]
    cli = s.get("conveyor_cli")
    if cli and best:
        r = cli["ratio_to_dali_best"]
        md += ["**Conveyor (C++) / DALI's best: %.2fx** (target %.2fx: %s). Conveyor %.0f images/s (slowest block "
               "%.0f) vs DALI %.0f (slowest block %.0f)." % (r, TARGET, "met" if r >= TARGET else "NOT met",
                                                            cli["images_per_s"], cli["slowest_block"],
                                                            best["images_per_s"], best["slowest_block"]), ""]
    else:
        md += ["**No ratio**: %s." % ("no Conveyor C++ figure" if not cli else "no DALI figure (see the rows)"), ""]
    md += ["## Summary (median of process medians; slowest block over all processes)", "",
           "| contender | processes | images/s | slowest block | / DALI unfused | / DALI fused | slowest / DALI fused |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, what in WHO:
        if key in s:
            e = s[key]
            what = e["what"]
            md.append("| %s | %d | %.0f | %.0f | %s | %s | %s |" % (
                what, e["processes"], e["images_per_s"], e["slowest_block"], fmt(e.get("ratio_to_dali_unfused"), 2),
                fmt(e.get("ratio_to_dali_fused"), 2), fmt(e.get("slowest_ratio_to_dali_fused"), 2)))
        else:
            md.append("| %s | 0 | — | — | — | — | — |" % what)
    decode = rows.get("conveyor_decode_only")
    if cli and decode and rates(decode):
        md += ["", "Conveyor's full pipeline runs at %.0f%% of its own decode-only rate on these files (%.0f images/s): "
               "the ceiling that the operators after decoding leave." % (
                   100 * cli["images_per_s"] / rates(decode)[0], rates(decode)[0])]
    md += ["", "## Rows", "",
           "| row | process | images/s median | slowest block | fastest block | GPU memory MiB | CPU cores busy | "
           "host memory MiB (PSS) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in sorted(rows.items()):
        md.append(row_line(name, r))
    md += ["", "GPU memory: NVML's device figure above the idle reading. CPU cores busy: the timed blocks' CPU time / "
           "wall for the Python rows; for `conveyor bench` rows the whole process (start-up and warm-up included)."]
    stage = [l for name, r in sorted(rows.items()) if name.startswith("conveyor") for l in stage_lines(name, r)]
    if stage:
        md += ["", "## Where Conveyor's time goes (`conveyor bench` counters, timed part)", ""] + stage
    abl = [(k, w) for k, w in ABLATION if k in rows]
    if abl:
        md += ["", "Ablation rows (one process each): " + "; ".join("`%s`: %s" % kw for kw in abl) + "."]
    md += ["", "## Checks", "",
           "- Self-check (`conveyor run` one batch + check_outputs.py): **%s**" % (read(raw, "self_check.status") or
                                                                                   "not run")]
    tail = read(raw, "self_check.log").splitlines()[-2:]
    md += ["  - " + l for l in tail]
    for name, r in sorted(rows.items()):
        if "encoded_shape" in r:
            md.append("- `%s`: encoded targets %s (%s anchors)" % (name, r["encoded_shape"], r.get("anchors")))
    md += ["", "## Settings and data", "", "- " + (read(raw, "settings.txt") or "—"),
           "- DALI: prefetch_queue_depth as Conveyor's prefetch_depth, num_threads as Conveyor's, hw_decoder_load "
           "default, decoding `mixed`; pixel operators on the GPU; box operators on the CPU (as its SSD example), "
           "targets moved with `.gpu()`, except `dali_fused_gpuenc` (box_encoder on the GPU). Conveyor: box_encoder "
           "on the GPU (captured), the other box operators on the CPU.",
           "- Anchors: SSD300's 8732 default boxes (bench/detection/ssd_anchors.py) on both sides.",
           "- Data: " + (read(raw, "data_summary.txt").replace("\n", " ") or "—"),
           "- Annotations: " + (read(raw, "annotations.txt") or "—"), "", "## Machine", "", "```", machine, "```"]
    skipped = read(raw, "skipped.txt")
    if skipped:
        md += ["", "## Skipped", ""] + ["- " + l for l in skipped.splitlines()]
    timings = read(raw, "timings.txt")
    if timings:
        md += ["", "## Where the time went", ""] + ["- " + l for l in timings.splitlines()]
    return "\n".join(md) + "\n", gpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out")
    ap.add_argument("--behind", action="store_true")
    args = ap.parse_args()
    if args.behind:
        print(behind(args.raw))
        return 0
    if not args.out:
        sys.exit("results.py: expected --out DIR (or --behind)")
    rows = load_rows(args.raw)
    s, best = summary(rows)
    md, gpu = page(args.raw, rows, s, best)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write(md)
    cli = s.get("conveyor_cli", {})
    result = {"device": gpu, "summary": s, "rows": rows, "self_check": read(args.raw, "self_check.status"),
              "target": {"what": "Conveyor C++ images/s / DALI's best mode, same run", "target": TARGET,
                         "ratio": cli.get("ratio_to_dali_best"),
                         "met": None if "ratio_to_dali_best" not in cli else cli["ratio_to_dali_best"] >= TARGET}}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    print(md.split("\n## Rows")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
