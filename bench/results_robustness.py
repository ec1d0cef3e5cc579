"""RESULTS.md's robustness sweep (bench/run_robustness.sh, issue 34): one property of the data at a
time against the `varied` base, Conveyor (`conveyor bench`, fused) beside DALI (fused); and the data
sets' shares, from the generator's manifests that bench/lib.sh `dataset` copies into the raw folder
(manifest_<set>.tsv: a header, then name, format, width, height, subsampling, progressive, quality,
bytes per file)."""
import glob
import os

from results_format import brief, fmt, rate, ratio

BASE = "varied"
VARIANTS = [("varied", "the base: varied sizes, q90, baseline 4:2:0"),
            ("varied_progressive", "progressive JPEGs among them"),
            ("varied_422", "4:2:2 files among them"),
            ("varied_444", "4:4:4 files among them"),
            ("varied_gray", "grayscale files among them"),
            ("varied_quality", "quality 70-98 instead of 90"),
            ("varied_large", "large files (≥ 3000 px) among them")]
THRESHOLD = 0.85  # each variant, Conveyor: ≥ this × the base's images/s (issue 34)
LARGE_PX = 3000


def decoder_split(row):
    """Conveyor's decoder (`conveyor bench --json`'s decoder_mix): images per call on the engines, the
    CUDA backend, the CPU path, and where present those in the engines' calls of their own and those a
    path refused."""
    m = (row or {}).get("decoder_mix")
    if not m:
        return ""
    parts = [m.get("engines_images_per_call", 0), m.get("cuda_images_per_call", 0), m.get("cpu_images_per_call", 0)]
    out = "engines %.1f, CUDA %.1f, CPU %.1f" % tuple(parts)
    if m.get("engines_other_images_per_call"):
        out += "; engines' own calls (4:4:4, 4:2:2, gray) %.1f" % m["engines_other_images_per_call"]
    if m.get("fallbacks_per_call"):
        out += "; refused by a path %.1f" % m["fallbacks_per_call"]
    return out


def robustness(rows):
    """(markdown, targets, figures for results.json)."""
    found = {}
    for row in rows.values():
        tags = row.get("tags", {})
        if tags.get("sweep") == "robustness":
            found.setdefault(tags.get("set"), {})[tags.get("who")] = row
    md = ["## Robustness sweep: one property at a time", ""]
    if not found:
        return md + ["Not run in this call (bench/run_robustness.sh).", ""], [], []
    md += ["2,048 files a set; each variant changes one property of the base `varied` (shares: the data sets table). "
           "Conveyor: `conveyor bench`, fused pipeline, capture on (C++); DALI: the fused pipeline from Python; one "
           "process each, back to back, run_all.sh's settings. Images/s: median of 5 timed blocks (slowest block). "
           "× base: against the same contender on `varied`. Target: Conveyor ≥ %.2f× the base on every variant." %
           THRESHOLD, "",
           "| set | what changes | Conveyor images/s: median (slowest block) | × base | DALI images/s: median "
           "(slowest block) | × base | Conveyor × DALI | Conveyor's decoder: images per call |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    known = [name for name, _ in VARIANTS]
    order = VARIANTS + [(name, "") for name in sorted(n for n in found if n not in known)]
    bc, bd = rate(found.get(BASE, {}).get("conveyor")), rate(found.get(BASE, {}).get("dali"))
    checks, figures = [], []
    for name, what in order:
        c, d = found.get(name, {}).get("conveyor"), found.get(name, {}).get("dali")
        rc, rd = rate(c), rate(d)
        xc, xd = ratio(rc and rc[0], bc and bc[0]), ratio(rd and rd[0], bd and bd[0])
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, what, "%s (%s)" % (fmt(rc[0]), fmt(rc[1])) if rc else brief(c),
            fmt(xc, 2) if name != BASE or not rc else "1", "%s (%s)" % (fmt(rd[0]), fmt(rd[1])) if rd else brief(d),
            fmt(xd, 2) if name != BASE or not rd else "1", fmt(ratio(rc and rc[0], rd and rd[0]), 2), decoder_split(c)))
        figures.append({"set": name, "conveyor_images_per_s": rc and rc[0], "conveyor_slowest_block": rc and rc[1],
                        "conveyor_x_base": xc, "dali_images_per_s": rd and rd[0], "dali_slowest_block": rd and rd[1],
                        "dali_x_base": xd})
        if name != BASE:
            checks.append({"target": "Robustness sweep, %s: Conveyor ≥ %.2f× the varied set" % (name, THRESHOLD),
                           "measured": "%s vs %s images/s = %s×" % (fmt(rc and rc[0]), fmt(bc and bc[0]), fmt(xc, 2)),
                           "met": None if xc is None else xc >= THRESHOLD})
    return md + [""], checks, figures


def _truthy(value):
    return value.strip().lower() in ("1", "yes", "y", "true", "progressive")


def _int(value):
    try:
        return int(float(value))
    except ValueError:
        return None


def read_manifest(path):
    """The manifest's files as dicts (column names lower-cased); tab-separated, else whitespace."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    if not lines:
        return []
    split = (lambda s: s.split("\t")) if "\t" in lines[0] else (lambda s: s.split())
    names = [n.strip().lower() for n in split(lines[0])]
    return [dict(zip(names, (v.strip() for v in split(line)))) for line in lines[1:]]


def percentile(values, p):
    """The value at rank round(p/100 * (n - 1)) of the sorted list, as the generator's summary
    (tools/testimages/dataset_mix.cc) computes its long-side percentiles."""
    s = sorted(values)
    return s[int(p / 100.0 * (len(s) - 1) + 0.5)]


def set_stats(files):
    n = len(files)
    png = [f for f in files if f.get("format", "").lower() == "png"]
    jpegs = [f for f in files if f.get("format", "").lower() != "png"]
    sub = {}
    for f in jpegs:
        sub[f.get("subsampling", "?")] = sub.get(f.get("subsampling", "?"), 0) + 1
    sides = [max(w, h) for w, h in ((_int(f.get("width", "")), _int(f.get("height", ""))) for f in files)
             if w is not None and h is not None]
    quality = [q for q in (_int(f.get("quality", "")) for f in jpegs) if q is not None and q > 0]
    size = [b for b in (_int(f.get("bytes", "")) for f in files) if b is not None]
    return {"files": n, "png": len(png), "subsampling": dict(sorted(sub.items(), key=lambda kv: -kv[1])),
            "progressive": sum(1 for f in jpegs if _truthy(f.get("progressive", ""))),
            "large": sum(1 for s in sides if s >= LARGE_PX),
            "long_side_p5_p50_p95": [percentile(sides, p) for p in (5, 50, 95)] if sides else None,
            "quality_min_max": [min(quality), max(quality)] if quality else None,
            "megabytes": round(sum(size) / 1e6, 1) if size else None}


SUBSAMPLING = {"420": "4:2:0", "422": "4:2:2", "444": "4:4:4"}


def quality(span):
    if not span:
        return "—"
    return "%d" % span[0] if span[0] == span[1] else "%d–%d" % tuple(span)


def share(count, n):
    return "%s (%.1f%%)" % (fmt(count), 100.0 * count / n) if n else fmt(count)


def datasets(raw):
    """(markdown, {set: stats}) from raw/manifest_<set>.tsv."""
    stats = {}
    for path in sorted(glob.glob(os.path.join(raw, "manifest_*.tsv"))):
        name = os.path.basename(path)[len("manifest_"):-len(".tsv")]
        try:
            stats[name] = set_stats(read_manifest(path))
        except (OSError, UnicodeDecodeError) as e:
            stats[name] = {"error": str(e)}
    md = ["## Data sets", ""]
    if not stats:
        return md + ["No manifests in this run's raw folder (bench/lib.sh `dataset` copies them).", ""], stats
    md += ["From each set's MANIFEST.tsv (tools/make_test_images --dataset). Subsampling counts JPEG files; large: "
           "long side ≥ %d px; long side in px (p50: the median file); MB: 10^6 bytes." % LARGE_PX, "",
           "| set | files | subsampling (JPEGs) | progressive | large | PNG | quality | long side p5 / p50 / p95 | MB |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    rank = {name: i for i, name in enumerate(["realistic", "uniform"] + [v for v, _ in VARIANTS])}
    for name in sorted(stats, key=lambda s: (rank.get(s, len(rank)), s)):
        s = stats[name]
        if "error" in s:
            md.append("| %s | unreadable: %s | | | | | | | |" % (name, s["error"]))
            continue
        n = s["files"]
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt(n), ", ".join("%s %s" % (SUBSAMPLING.get(k, k), share(v, n)) for k, v in s["subsampling"].items()),
            share(s["progressive"], n), share(s["large"], n), share(s["png"], n),
            quality(s["quality_min_max"]),
            " / ".join(fmt(x) for x in s["long_side_p5_p50_p95"]) if s["long_side_p5_p50_p95"] else "—",
            fmt(s["megabytes"], 1)))
    return md + [""], stats
