#!/usr/bin/env python3
"""bench/augment/run.sh's raw results -> RESULTS.md + results.json.

    results.py --raw RAW --out OUTDIR

Reads RAW/policy_<policy>_<who>.json (e2e/measure.py: `conveyor bench --json` or
dali_policy.py), RAW/gb_augment_bench.json (Google Benchmark), RAW/peers_augment.jsonl
(augment_peers.py, one JSON object a line), RAW/machine.txt, timings.txt, skipped.txt.

Policy figures: images/s, the median block and the slowest block side by side; ratio = Conveyor /
DALI (> 1: Conveyor faster); policy cost = time per image of the row minus that of the same side's
`none` row (µs per image; the pipeline overlaps its stages, so this is the policy's share of the
slowest stage, not its kernel time). Kernel figures: Conveyor's kernel_ms / b2b_ms beside the
fastest PyTorch peer on the same op and shapes; speed-up = peer / Conveyor.
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_format import read_kv  # noqa: E402

POLICIES = ["none", "rand_augment", "trivial_augment_wide", "auto_augment", "auto_augment_reduced"]
POLICY_NAMES = {
    "none": "no policy (baseline)",
    "rand_augment": "rand_augment n=2 m=9 (31 bins)",
    "trivial_augment_wide": "trivial_augment_wide (31 bins)",
    "auto_augment": "auto_augment image_net (different tables, see below)",
    "auto_augment_reduced": "auto_augment reduced_image_net (same table)",
}

DIFFERENCES = """\
### Where the two policy sets differ (read before the ratios)

- **auto_augment image_net is not the same policy on both sides.** Conveyor's `image_net` is
  torchvision's `AutoAugmentPolicy.IMAGENET` table (10 bins; posterize, rotate, solarize,
  auto_contrast, equalize, color, contrast, sharpness, shear_x, invert). DALI's
  `auto_augment_image_net` is its `get_image_net_policy` (11 bins), a different table with
  `solarize_add`, `shear_y` and `translate_y` and one-op sub-policies; Conveyor has no
  `solarize_add` and does not offer DALI's `image_net` table (docs/operators_augment.md). The
  `reduced_image_net` row runs DALI's own reduced_image_net table on both sides: that is the
  like-for-like auto_augment figure.
- rand_augment and trivial_augment_wide: the same 14 operations on both sides. Magnitudes are
  torchvision's on Conveyor's side and DALI's (monotonic) suites on DALI's: the same within a
  few percent at m = 9 (translate 101.5 px vs 100 px on a 224 image, solarize threshold 178.5 vs
  179.2, trivial's enhance range starts at 0 vs 0.01); posterize bits and rotation angles agree.
- Both: fill 128, linear interpolation for the warps (Conveyor's pipelines set `interp_type:
  linear`; its default is nearest), rotate keeps the size. Equalize and auto_contrast follow
  torchvision's formulas on Conveyor's side (DALI's equalize follows OpenCV's); sharpness keeps
  the 1-pixel border on Conveyor's side (DALI's filter pads it); uint8 results are rounded. The
  work per operation is the same kind (one histogram, one 3x3 filter, one warp).
- Execution differs by design: DALI splits each batch by the chosen operation with conditionals
  (a sub-batch per operation, then merges); Conveyor launches each of its 5 kernels once per
  step over the whole batch, samples not choosing a kernel returning at once (CUDA-graph
  captured).
"""


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": "unreadable %s: %s" % (os.path.basename(path), e)}


def rates(row):
    """(median, slowest block) images/s of a row, or None with the reason."""
    if row is None:
        return None, "not run"
    if "error" in row:
        return None, "error: " + row["error"].splitlines()[0][:160]
    if "skipped" in row:
        return None, "skipped: " + str(row["skipped"])[:70]
    if "samples_per_s" in row:  # conveyor bench --json
        s = row["samples_per_s"]
        return (s["median"], s["min"]), None
    if "images_per_s" in row:
        return (row["images_per_s"], row["images_per_s_min"]), None
    return None, "no figure in the row"


def ms(v):
    return "%.4f" % v if v < 1 else "%.2f" % v


def fmt(v, digits=0):
    if v is None:
        return "—"
    return ("{:,.%df}" % digits).format(v)


def policy_section(raw):
    rows = {os.path.basename(p)[7:-5]: load(p) for p in glob.glob(os.path.join(raw, "policy_*.json"))}
    figures, md = {}, []
    for p in POLICIES:
        for who in ("conveyor", "dali"):
            fig, why = rates(rows.get("%s_%s" % (p, who)))
            row = rows.get("%s_%s" % (p, who)) or {}
            m = row.get("measure", {})
            figures[(p, who)] = {"images_per_s": fig[0] if fig else None, "images_per_s_slowest_block": fig[1] if fig else None,
                                 "why": why, "gpu_mem_peak_mib": m.get("gpu_mem_peak_mib"),
                                 "cpu_cores_busy": row.get("cpu_cores_busy"), "versions": row.get("versions")}
    if not rows:
        return ["No policy rows (section 1 not run)."], {}
    md += ["| pipeline | Conveyor img/s median (slowest block) | DALI img/s median (slowest block) | "
           "ratio median (slowest) | policy cost µs/img Conveyor / DALI | GPU MiB C / D | CPU cores C / D |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    out = {}
    for p in POLICIES:
        c, d = figures[(p, "conveyor")], figures[(p, "dali")]
        if c["why"] == "not run" and d["why"] == "not run":
            continue

        def cell(f):
            return f["why"] if f["images_per_s"] is None else "%s (%s)" % (fmt(f["images_per_s"]),
                                                                             fmt(f["images_per_s_slowest_block"]))

        ratio = slow_ratio = None
        if c["images_per_s"] and d["images_per_s"]:
            ratio = c["images_per_s"] / d["images_per_s"]
            slow_ratio = c["images_per_s_slowest_block"] / d["images_per_s_slowest_block"]

        def cost(who):
            base, f = figures[("none", who)], figures[(p, who)]
            if p == "none" or not base["images_per_s"] or not f["images_per_s"]:
                return None
            return 1e6 / f["images_per_s"] - 1e6 / base["images_per_s"]

        cc, dc = cost("conveyor"), cost("dali")
        md.append("| %s | %s | %s | %s (%s) | %s / %s | %s / %s | %s / %s |" % (
            POLICY_NAMES[p], cell(c), cell(d), fmt(ratio, 2), fmt(slow_ratio, 2), fmt(cc, 1), fmt(dc, 1),
            fmt(c["gpu_mem_peak_mib"]), fmt(d["gpu_mem_peak_mib"]), fmt(c["cpu_cores_busy"], 1),
            fmt(d["cpu_cores_busy"], 1)))
        out[p] = {"conveyor": c, "dali": d, "ratio_median": ratio, "ratio_slowest_block": slow_ratio,
                  "policy_cost_us_per_image": {"conveyor": cc, "dali": dc}}
    md += ["", "Ratio > 1: Conveyor faster. Policy cost: the row's µs per image minus its side's `none` row "
           "(negative: within the noise of the decoder, which differs per process by up to 2x).", ""]
    return md, out


def kernel_section(raw):
    gb = load(os.path.join(raw, "gb_augment_bench.json"))
    ours = {}
    for b in gb.get("benchmarks", []):
        parts = b.get("name", "").split("/")
        op = parts[1] if len(parts) > 1 else parts[0]
        ours[op] = b
    peers, notes = {}, []
    path = os.path.join(raw, "peers_augment.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("{"):
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if "op" in r:
                        peers.setdefault(r["op"], []).append(r)
                    else:  # the script's own skip line (no torch, no GPU)
                        notes.append("augment_peers.py: " + str(r.get("skipped", r))[:200])
    if not ours and not peers:
        return ["No kernel figures (section 2 not run, or augment_bench missing: %s)." % gb.get("error", "")], {}
    md = ["| op | Conveyor ms (b2b) | eff GB/s (b2b) | ratio to D2D copy (b2b) | torchvision v2, batch, one "
          "parameter | torchvision v2, per image | torch eager | torch.compile | speed-up vs fastest peer (b2b) |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    out = {}
    for op in list(ours) + [o for o in peers if o not in ours]:
        b = ours.get(op, {})
        mine = "—"
        if b.get("error_occurred"):
            mine = "skipped: " + b.get("error_message", "")[:80]
        elif "kernel_ms" in b:
            mine = "%s (%s)" % (ms(b["kernel_ms"]), ms(b["b2b_ms"]))
        by_peer = {}
        for r in peers.get(op, []):
            by_peer.setdefault(r.get("peer", "?"), r)

        def peer_cell(name):
            r = by_peer.get(name)
            if r is None:
                return "—"
            if "ms" not in r:
                return "skipped" if "skipped" in r else "error"
            return "%s (%s)" % (ms(r["ms"]), ms(r["b2b_ms"]))

        timed = [r for r in by_peer.values() if "b2b_ms" in r]
        best = min(timed, key=lambda r: r["b2b_ms"]) if timed else None
        speedup = best["b2b_ms"] / b["b2b_ms"] if best and b.get("b2b_ms") else None
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            op, mine, "%.0f (%.0f)" % (b["eff_GBps"], b["b2b_eff_GBps"]) if "eff_GBps" in b else "—",
            "%.2f (%.2f)" % (b["ratio_to_copy"], b["b2b_ratio_to_copy"]) if "ratio_to_copy" in b else "—",
            peer_cell("torchvision v2"), peer_cell("torchvision v2 (per image)"), peer_cell("eager"),
            peer_cell("torch.compile"),
            "%.1fx (%s)" % (speedup, best["peer"]) if speedup else "—"))
        out[op] = {"conveyor": {k: b.get(k) for k in ("kernel_ms", "b2b_ms", "eff_GBps", "b2b_eff_GBps", "ratio_to_copy",
                                                      "b2b_ratio_to_copy", "copy_GBps", "label")},
                   "peers": list(by_peer.values()), "speedup_b2b_vs_fastest_peer": speedup}
    md += ["", "Batch 256 x 224x224x3 uint8. ms: one launch (one call) between two CUDA events, median; b2b: per "
           "launch of 20 (peers: 10) enqueued back to back. eff GB/s on the minimal bytes (the image read once + "
           "written once). Peers work on NCHW uint8 CUDA tensors. torchvision v2 \"batch\": one call on the batch "
           "with ONE parameter for all images (a lower bound: the operators draw per sample); \"per image\": one "
           "call per image with its own parameter (policies: its own draw), what per-sample work costs there; "
           "eager / torch.compile: batched torch with per-sample parameters. The speed-up is against the "
           "fastest of them, the batch lower bound included. Each peer line's `note` in peers_augment.jsonl "
           "says what it does.",
           ""] + ["%s" % n for n in notes] + ([""] if notes else [])
    return md, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    machine = read_kv(os.path.join(args.raw, "machine.txt"))
    md = ["# Augmentation: policies vs DALI auto_aug, and the kernels (issue 38)", ""]
    md += ["- %s: %s" % (k, v) for k, v in machine.items()] + [""]
    pmd, policies = policy_section(args.raw)
    md += ["## 1. Policies, end to end (realistic set, GPU decode → random_resized_crop 224 → flip → policy → "
           "normalize float32 CHW)", ""] + pmd + [DIFFERENCES]
    kmd, kernels = kernel_section(args.raw)
    md += ["## 2. Kernels beside a D2D copy and the PyTorch peers", ""] + kmd
    for name in ("skipped.txt", "timings.txt"):
        path = os.path.join(args.raw, name)
        if os.path.exists(path):
            with open(path) as f:
                md += ["## %s" % ("Skipped" if name == "skipped.txt" else "Where the time went"), "", "```",
                       f.read().strip(), "```", ""]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"machine": machine, "policies": policies, "kernels": kernels}, f, indent=1, sort_keys=True)
    print("results: %s" % os.path.join(args.out, "RESULTS.md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
