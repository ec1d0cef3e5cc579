#!/usr/bin/env python3
"""Makes the video benchmark's RESULTS.md and results.json from the raw files bench/video/run.sh
leaves: one JSON per contender row (bench/e2e/measure.py's, tagged codec=, stride=, role=), the
NVDEC samples beside each (NAME.nvdec.csv, nvdec_sampler.py), machine.txt, data_<codec>.txt,
skipped.txt and timings.txt.

    video_results.py --raw DIR --out DIR

Figures per row: clips/s and frames/s, the median over the timed blocks and the slowest block;
the ratio to DALI's readers.video of the same codec and stride (median to median, slowest to
slowest), judged against the issue's target (>= 1.25x, Conveyor's C++ row); NVDEC utilisation over
the row's timed window, mean and max of the samples in it. The window: the Python rows print theirs
(timed_window_epoch); `conveyor bench` prints none, so its window is the timed seconds (from its
blocks' rates) ending at its last sample with the decoder busy, which the table says.
"""
import argparse
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from results_format import read_kv  # noqa: E402

TARGET = 1.25
PEER = "dali_legacy"
ROLES = {  # role -> what the table calls it, in table order
    "conveyor_cli": "Conveyor, `conveyor bench` (C++)",
    "conveyor_python": "Conveyor, Python loop (conveyor.Pipeline)",
    "dali_legacy": "DALI 2.4 fn.readers.video",
    "dali_experimental": "DALI 2.4 fn.experimental.readers.video",
    "torchcodec": "torchcodec (cuda)",
}
CODECS = {"h264": "H.264", "hevc": "HEVC"}


def read_nvdec(path):
    """(source text, [(epoch seconds, percent)]) of a sampler's file; ("missing", []) without one."""
    if not os.path.exists(path):
        return "missing", []
    source, samples = "", []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                source = line.lstrip("# ")
            elif line:
                t, _, v = line.partition(",")
                try:
                    samples.append((float(t), float(v)))
                except ValueError:
                    pass
    return source, samples


def timed_seconds(row):
    """The timed blocks' total seconds, from their rates (`conveyor bench`: samples_per_s.repeats)."""
    rates = (row.get("samples_per_s") or {}).get("repeats") or []
    per_block = row.get("iterations", 0) * row.get("batch_size", 0)
    return sum(per_block / r for r in rates if r > 0) if per_block else 0.0


def nvdec_summary(samples, window=None, timed_s=0.0):
    """Mean and max NVDEC percent over the timed window. `window` [start, end] when the row printed
    it; else the `timed_s` seconds ending at the last busy sample (estimated)."""
    if not samples:
        return None
    how = "timed window"
    if window:
        picked = [v for t, v in samples if window[0] <= t <= window[1]]
    elif timed_s > 0:
        busy = [t for t, v in samples if v > 0]
        end = busy[-1] if busy else samples[-1][0]
        picked = [v for t, v in samples if end - timed_s <= t <= end]
        how = "estimated window (the timed seconds ending at the last busy sample)"
    else:
        picked, how = [v for _, v in samples], "whole process"
    if not picked:  # a window shorter than the sampling period
        picked, how = [v for _, v in samples], "whole process (no sample in the timed window)"
    return {"mean": round(statistics.mean(picked), 1), "max": round(max(picked), 1), "samples": len(picked),
            "window": how}


def normalise(raw_dir, path):
    """One row of the table from a contender's JSON (any of the contenders' shapes)."""
    with open(path) as f:
        r = json.load(f)
    tags = r.get("tags", {})
    row = {"name": os.path.splitext(os.path.basename(path))[0], "role": tags.get("role", "?"),
           "codec": tags.get("codec", "?"), "stride": int(tags.get("stride", 1) or 1),
           "measure": r.get("measure", {}), "notes": []}
    if "error" in r:
        row["error"] = r["error"].strip().splitlines()[0][:300] if r["error"].strip() else "error"
        return row
    if "skipped" in r:
        row["skipped"] = r["skipped"]
        return row
    seq = r.get("sequence_length", 16)
    if "samples_per_s" in r:  # conveyor bench --json: samples are clips
        s = r["samples_per_s"]
        row.update(clips=s["median"], clips_min=s["min"], window=None, timed_s=timed_seconds(r),
                   cpu=r.get("cpu_cores_busy"), seq=int(tags.get("sequence_length", seq)))
    else:
        row.update(clips=r["clips_per_s"], clips_min=r["clips_per_s_min"], window=r.get("timed_window_epoch"),
                   timed_s=0.0, cpu=r.get("cpu_cores_busy"), seq=seq)
    row["notes"] += fallback_notes(os.path.join(raw_dir, row["name"] + ".log"))
    row["frames"], row["frames_min"] = row["clips"] * row["seq"], row["clips_min"] * row["seq"]
    source, samples = read_nvdec(os.path.join(raw_dir, row["name"] + ".nvdec.csv"))
    row["nvdec"] = nvdec_summary(samples, row["window"], row["timed_s"])
    row["nvdec_source"] = source
    return row


def fallback_notes(log_path):
    """Conveyor's reader says once per file on stderr when NVDEC did not decode it (docs/video.md,
    Fallback): such a row did not time NVDEC alone, and the table must say so."""
    if not os.path.exists(log_path):
        return []
    with open(log_path, errors="replace") as f:
        hits = [line.strip() for line in f if "NVDEC not used" in line]
    return ["%d file(s) decoded on the CPU, first: %s" % (len(hits), hits[0][:300])] if hits else []


def load_rows(raw_dir):
    rows = [normalise(raw_dir, p) for p in sorted(glob.glob(os.path.join(raw_dir, "*.json")))]
    order = list(ROLES)
    rows.sort(key=lambda r: (list(CODECS).index(r["codec"]) if r["codec"] in CODECS else 9, r["stride"],
                             order.index(r["role"]) if r["role"] in order else 9))
    return rows


def add_ratios(rows):
    """ratio / ratio_min to DALI's readers.video of the same codec and stride; the targets."""
    peers = {(r["codec"], r["stride"]): r for r in rows if r["role"] == PEER and "clips" in r}
    targets = []
    for r in rows:
        peer = peers.get((r["codec"], r["stride"]))
        if "clips" in r and peer and r["role"] != PEER:
            r["ratio"] = r["clips"] / peer["clips"] if peer["clips"] else None
            r["ratio_min"] = r["clips_min"] / peer["clips_min"] if peer["clips_min"] else None
        if r["role"] == "conveyor_cli":
            met = r.get("ratio") is not None and r["ratio"] >= TARGET
            targets.append({"codec": r["codec"], "stride": r["stride"], "target": ">= %.2fx DALI readers.video" % TARGET,
                            "ratio_median": r.get("ratio"), "ratio_slowest": r.get("ratio_min"),
                            "met": met if r.get("ratio") is not None else None})
    return targets


def fmt(v, digits=1):
    return "—" if v is None else ("%.*f" % (digits, v))


def table(rows):
    lines = ["| codec | stride | contender | clips/s median (slowest block) | frames/s median (slowest block) | "
             "x DALI readers.video, median (slowest) | NVDEC util % mean / max | GPU memory MiB | CPU cores busy |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        head = "| %s | %d | %s |" % (CODECS.get(r["codec"], r["codec"]), r["stride"], ROLES.get(r["role"], r["role"]))
        if "clips" not in r:
            why = r.get("error") or r.get("skipped")
            lines.append(head + " %s: %s | | | | | |" % ("error" if "error" in r else "skipped", why.replace("|", "/")))
            continue
        n = r["nvdec"]
        util = "—" if not n else "%s / %s%s" % (fmt(n["mean"]), fmt(n["max"]), " (est.)" if "estimated" in n["window"] else "")
        ratio = "—" if "ratio" not in r else "%sx (%sx)" % (fmt(r["ratio"], 2), fmt(r["ratio_min"], 2))
        lines.append(head + " %s (%s) | %s (%s) | %s | %s | %s | %s |" % (
            fmt(r["clips"]), fmt(r["clips_min"]), fmt(r["frames"], 0), fmt(r["frames_min"], 0), ratio, util,
            fmt(r["measure"].get("gpu_mem_peak_mib"), 0), fmt(r.get("cpu"), 2)))
    return lines


def lines_of(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def page(raw_dir, rows, targets):
    machine = read_kv(os.path.join(raw_dir, "machine.txt"))
    device = machine.get("gpu", "no GPU (nvidia-smi found none)").split(",")[0]
    md = ["# Video benchmark (issue 39): Conveyor vs DALI 2.4 readers.video", "",
          "Device: **%s**; %s; %s." % (device, machine.get("cpu", "cpu ?"), machine.get("date_utc", "date ?")),
          "Conveyor: %s." % machine.get("conveyor_commit", "commit ?"), "",
          "Clips of 16 frames (stride as in the table, step 16, random shuffle), batch of %s clips, every frame "
          "resized to 224x224 on the %s, uint8 FHWC. Same files, same run, one process per row "
          "(bench/e2e/measure.py). Rates: median over the timed blocks and the slowest block, the first epoch "
          "and warm-up untimed. Resize: both libraries' defaults, linear with antialiasing; their filters are "
          "each library's own (outputs may differ by rounding)." % (machine.get("batch", "?"), machine.get("device", "GPU").upper()), ""]
    for codec in CODECS:
        data = read_kv(os.path.join(raw_dir, "data_%s.txt" % codec))
        if data:
            md.append("- Data %s: %s" % (CODECS[codec], ", ".join("%s %s" % kv for kv in data.items())))
    md += ["", "## Results", ""] + table(rows) + ["", "## Target: Conveyor >= %.2fx DALI readers.video" % TARGET, ""]
    for t in targets:
        where = "- %s, stride %d: " % (CODECS.get(t["codec"], t["codec"]), t["stride"])
        if t["met"] is None:
            md.append(where + "not judged (no DALI readers.video row)")
        else:
            md.append(where + "%s (median %sx, slowest block %sx)" % (
                "met" if t["met"] else "not met", fmt(t["ratio_median"], 2), fmt(t["ratio_slowest"], 2)))
    sources = sorted({r["nvdec_source"] for r in rows if r.get("nvdec_source")})
    md += ["", "NVDEC utilisation: %s. All engines of the GPU together, as the driver reports it." %
           ("; ".join(sources) or "not sampled")]
    notes = ["%s: %s" % (r["name"], n) for r in rows for n in r["notes"]]
    extra = [("Notes", notes), ("Skipped (budget)", lines_of(os.path.join(raw_dir, "skipped.txt"))),
             ("Where the time went", lines_of(os.path.join(raw_dir, "timings.txt")))]
    for title, items in extra:
        if items:
            md += ["", "## " + title, ""] + ["- " + i for i in items]
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = load_rows(args.raw)
    if not rows:
        sys.exit("video_results.py: no contender JSON in %s" % args.raw)
    targets = add_ratios(rows)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
        f.write(page(args.raw, rows, targets))
    machine = read_kv(os.path.join(args.raw, "machine.txt"))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"device": machine.get("gpu"), "machine": machine, "rows": rows, "targets": targets}, f,
                  indent=1, sort_keys=True)
    print("video_results: %d rows, targets: %s" % (len(rows), ", ".join(
        "%s/s%d %s" % (t["codec"], t["stride"], t["met"]) for t in targets) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
