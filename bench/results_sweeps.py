"""Section 3 of RESULTS.md (bench/run_sweeps.sh): images/s against batch, threads, image size and
prefetch depth, Conveyor beside DALI, and the default setting measured again by every axis — the
run's noise floor, and Conveyor/DALI pairs measured back to back."""
import re
import statistics

from results_format import fmt, rate, ratio, status


def knee(points):
    """The first value after which one more step gains < 5%, or None."""
    for (v0, r0), (v1, r1) in zip(points, points[1:]):
        if r0 and r1 is not None and r1 < r0 * 1.05:
            return v0
    return None


def sweeps(rows):
    found = {}
    for row in rows.values():
        tags = row.get("tags", {})
        if "axis" in tags:
            found.setdefault(tags["axis"], []).append(row)
    if not found:
        return ["## 3. How cost grows", "", "Not run in this call (bench/run_sweeps.sh).", ""]
    md = ["## 3. How cost grows", "",
          "Conveyor: `conveyor bench`, fused pipeline, capture on (with its stage times per iteration); DALI: the fused "
          "pipeline from Python. One knob varies, the rest as in section 1; the uniform set's files (500x375 "
          "q90), and generated ones for the size axis. *knee*: the first value after which one "
          "more step gains < 5%.", ""]
    for axis in ("batch", "threads", "size", "prefetch"):
        if axis not in found:
            continue
        table = {}
        for row in found[axis]:
            t = row["tags"]
            table.setdefault(t.get("value"), {})[t.get("who")] = row
        order = sorted(table, key=lambda v: [int(x) for x in re.findall(r"\d+", v)] or [0])
        md += ["### images/s against %s" % axis, "",
               "| %s | Conveyor images/s | ms/it CPU stage, GPU issue, GPU wait, idle | DALI images/s | × DALI |" % axis,
               "| --- | --- | --- | --- | --- |"]
        conv_points = []
        if axis == "size":
            md[-2] = md[-2].replace("| × DALI |", "| × DALI | Conveyor Mpixel/s |")
            md[-1] += " --- |"
        for v in order:
            c, d = table[v].get("conveyor"), table[v].get("dali")
            rc, rd = rate(c), rate(d)
            st = ""
            if c and "ms_per_iteration" in c:
                s = c["ms_per_iteration"]
                st = "%.2f, %.2f, %.2f, %.2f" % (s["cpu_stage"], s["gpu_issue"], s["gpu_wait"], s["idle"])
            line = "| %s | %s | %s | %s | %s |" % (v, fmt(rc[0]) if rc else status(c), st,
                                                  fmt(rd[0]) if rd else status(d), fmt(ratio(rc and rc[0], rd and rd[0]), 2))
            if axis == "size":
                w, h = (int(x) for x in re.findall(r"\d+", v)[:2])
                line += " %s |" % fmt(rc and rc[0] * w * h / 1e6, 1)
            md.append(line)
            conv_points.append((v, rc and rc[0]))
        where = "Stage times say why: CPU stage ≈ the period per iteration: CPU-bound; GPU wait ≈ the period: GPU-bound; " \
                "idle: waiting for the consumer."
        if axis == "size":
            md += ["", "Cost per pixel: Mpixel/s (decoded pixels) should stay flat while decoding dominates. " + where, ""]
        else:
            md += ["", "Knee (Conveyor): %s. %s" % (knee(conv_points) or "none in this range", where), ""]
    return md + spread(rows, found)


DEFAULTS = {"batch": "256", "threads": "8", "size": "500x375", "prefetch": "2"}


def spread(rows, found):
    """The default setting measured again by every axis (and section 1 on the uniform set, the
    sweeps' files): how far apart the same measurement lands within one run, so a reader can tell a
    trend from noise. Each axis measures Conveyor and DALI back to back, so each row is also a pair
    whose ratio is little exposed to the machine's drift over the run (section 1's pair: its C++
    fused row and DALI's first process, a few rows apart)."""
    pairs = []  # (where, conveyor images/s, DALI images/s)
    for axis, value in DEFAULTS.items():
        at = {}
        for row in found.get(axis, []):
            t = row["tags"]
            r = rate(row)
            if t.get("value") == value and r:
                at[t.get("who")] = r[0]
        if at:
            pairs.append((axis, at.get("conveyor"), at.get("dali")))
    section1 = {}  # run_all.sh's C++ fused row on the uniform set (the sweeps' files) and DALI's first process
    for row in rows.values():
        tags = row.get("tags", {})
        r = rate(row)
        if r and tags.get("set") == "uniform" and tags.get("process", "1") == "1" and \
                tags.get("role") in ("conveyor_cli_fused_on", "dali_fused"):
            section1[tags["role"]] = r[0]
    if section1:
        pairs.append(("section 1", section1.get("conveyor_cli_fused_on"), section1.get("dali_fused")))
    if len(pairs) < 2:
        return []
    md = ["### The same setting, measured again", "",
          "Every axis passes through the default setting (batch 256, 8 threads, 500x375, prefetch 2), and section 1 "
          "measures it too on the uniform set (the same files): the spread of those repeats in this run is the "
          "noise floor of the tables above — a difference between two points smaller than it is not a trend. Each "
          "sweep point runs Conveyor and DALI back to back, so the ratio of a pair is little exposed to the "
          "machine's drift over the run (section 1's pair: its C++ fused row and DALI's first process, a few rows "
          "apart).", "",
          "| measured by | Conveyor (`conveyor bench`) images/s | DALI images/s | × DALI |", "| --- | --- | --- | --- |"]
    for where, c, d in pairs:
        md.append("| %s | %s | %s | %s |" % (where, fmt(c) if c else "—", fmt(d) if d else "—", fmt(ratio(c, d), 2)))
    summary = []
    for name, values in (("Conveyor", [c for _, c, _ in pairs if c]), ("DALI", [d for _, _, d in pairs if d])):
        if len(values) >= 2:
            lo, hi = min(values), max(values)
            summary.append("%s %s–%s images/s (spread %s%%)" % (name, fmt(lo), fmt(hi), fmt(100 * (hi - lo) / lo)))
    ratios = sorted(ratio(c, d) for _, c, d in pairs if c and d)
    if ratios:
        summary.append("× DALI: median %s of %d pairs (%s–%s)" % (fmt(statistics.median(ratios), 2), len(ratios),
                                                                  fmt(ratios[0], 2), fmt(ratios[-1], 2)))
    return md + ["", "; ".join(summary) + ".", ""]
