"""Section 1 of RESULTS.md (bench/run_all.sh, issues 13 and 34): every contender on the realistic set
(the headline) beside the uniform set (the second column), and the issue 34 targets judged from them.

Rows are found by their tags: role= (what was measured), set= (which data set), process= (which of
the compared pairs' processes). A role measured in several processes becomes one row (combine)."""
import statistics

from results_format import brief, fmt, mem, rate, ratio

HEADLINE, SECOND = "realistic", "uniform"
# role -> (what, kind): kind pairs a Conveyor row with its DALI peer.
E2E = [
    ("conveyor_py_fused_on", "Conveyor, Python loop through conveyor.torch.Loader: fused ROI decode + resize, "
     "graph capture on", "fused"),
    ("conveyor_py_fused_off", "Conveyor, Python loop through conveyor.torch.Loader: fused, capture off", "fused"),
    ("conveyor_py_unfused_on", "Conveyor, Python loop through conveyor.torch.Loader: decode + random_resized_crop, "
     "capture on", "unfused"),
    ("conveyor_py_unfused_off", "Conveyor, Python loop through conveyor.torch.Loader: unfused, capture off", "unfused"),
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
# Roles whose rows must name their data set (run_all.sh's sections 1 and 2a).
SET_ROLES = {role for role, _, _ in E2E} | {"conveyor_decode_pipeline", "dali_decode", "dali_decode_engines",
                                            "dali_decode_cuda", "torchvision_decode"}
TARGETS = {"dali": 1.25, "slowest_block": 0.85, "uniform": 36000.0, "torchvision": 10.0, "dataloader": 5.0}


def legacy(rows):
    """Names of rows from a run_all.sh before the data sets (a section 1 or 2a role, no set= tag)."""
    return sorted(name for name, row in rows.items()
                  if row.get("tags", {}).get("role") in SET_ROLES and "set" not in row.get("tags", {}))


def by_role(rows):
    """(set, role) -> its row (set None for rows of no data set: overhead); a role measured in several
    processes (run_all.sh --processes) -> one row combined from them (combine)."""
    groups = {}
    for name in sorted(rows):
        tags = rows[name].get("tags", {})
        if tags.get("role"):
            groups.setdefault((tags.get("set"), tags["role"]), []).append(rows[name])
    return {key: combine(group) for key, group in groups.items()}


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


def sets_of(roles):
    """The data sets of section 1's rows: the headline, the second column, then any other."""
    found = {s for (s, role) in roles if s and role in SET_ROLES}
    return [s for s in (HEADLINE, SECOND) if s in found] + sorted(found - {HEADLINE, SECOND})


def cell(row):
    """images/s of a row as section 1 shows it: median (slowest block), and each process's median."""
    r = rate(row)
    if r is None:
        return brief(row) if row else "—"
    out = "%s (%s)" % (fmt(r[0]), fmt(r[1]))
    if len(row.get("processes", [])) > 1:
        out += "<br>%d processes: %s" % (len(row["processes"]), " / ".join(fmt(x) for x in row["processes"]))
        if row.get("processes_failed"):
            out += " (%d failed)" % row["processes_failed"]
    return out


def details(row):
    """The headline row's stage split (Python and C++ rows) and decoder split (C++ rows)."""
    out = ""
    if row and "ms_per_iteration" in row:
        s = row["ms_per_iteration"]
        out += "<br>ms/it: CPU stage %.2f, GPU issue %.2f, GPU wait %.2f, idle %.2f" % (
            s["cpu_stage"], s["gpu_issue"], s["gpu_wait"], s["idle"])
    if row and "decoder_mix" in row and "decoder_ms_per_call" in row:  # `conveyor bench --json`
        m, d = row["decoder_mix"], row["decoder_ms_per_call"]
        out += "<br>decoder call %.2f ms: engines %.0f%% (batch %.2f ms host, %.2f GPU), CUDA backend %.2f ms" % (
            d["call"], 100 * m["engines_share"], m["engines_host_ms_per_batch"], m["engines_gpu_ms_per_batch"],
            m["cuda_ms_per_call"])
    return out


def e2e_section(roles):
    """Section 1's markdown and its figures for results.json (one entry per role and set)."""
    sets = sets_of(roles)
    md = ["## 1. End to end: the realistic set (headline) and the uniform set", "",
          "Same files for every contender within a set, batch 256, 224x224 float16 CHW normalized, random horizontal "
          "flip, RandomResizedCrop-style windows (area [0.08, 1], aspect [3/4, 4/3]). **realistic** (the headline): "
          "the ImageNet-like mix of the data sets table below; **uniform**: 2,048 photo-like 500x375 q90 4:2:0 JPEGs "
          "(the issue 13 runs' files), never the headline. On the uniform set only the compared fused pair, "
          "Conveyor's C++ fused row and decode alone run. Images/s: median of the timed blocks, in parentheses the "
          "slowest block; a row measured in several processes (the compared pairs: their decoders' speed differs "
          "per process) gives the median of the processes' medians, each process's median listed, and the slowest "
          "block of all. × DALI: against DALI's row of the same kind on the same set in this run. Conveyor's Python "
          "rows iterate conveyor.torch.Loader (torch tensors, zero-copy); DALI's iterate pipe.run() (its "
          "DALIGenericIterator would add a copy into torch tensors). CPU cores busy: process CPU time / wall over "
          "the timed blocks (every row; `conveyor bench` reports its own over its timed part). GPU memory: NVML device memory "
          "used above the idle reading (context included). Host memory: PSS summed over the process and its "
          "workers. The last five columns: %s set." % (sets[0] if sets else HEADLINE), ""]
    if not sets:
        return md + ["Not run in this call (bench/run_all.sh --only e2e).", ""], []
    head = "| pipeline |" + "".join(" %s images/s: median (slowest block) | × DALI |" % s for s in sets)
    md += [head + " × torchvision GPU | × DataLoader | CPU cores busy | GPU mem peak MiB | host mem peak MiB |",
           "|" + " --- |" * (6 + 2 * len(sets))]
    main = sets[0]
    tv, dl = rate(roles.get((main, "torchvision_gpu"))), rate(roles.get((main, "dataloader")))
    figures = []
    for role, what, kind in E2E:
        if not any((s, role) in roles for s in sets):
            md.append("| %s |%s%s" % (what, " not run | |" * len(sets), " |" * 5))
            continue
        line = "| %s%s |" % (what, details(roles.get((main, role))))
        for s in sets:
            row = roles.get((s, role))
            r, d = rate(row), rate(roles.get((s, "dali_" + kind))) if kind else None
            x = ratio(r and r[0], d and d[0]) if role.startswith("conveyor") else None
            line += " %s | %s |" % (cell(row), fmt(x, 2))
            if r:
                figures.append({"set": s, "role": role, "images_per_s": r[0], "slowest_block": r[1],
                                "processes": row.get("processes"), "x_dali": x})
        row = roles.get((main, role))
        r = rate(row)
        conveyor = role.startswith("conveyor") and r
        line += " %s | %s | %s | %s | %s |" % (
            fmt(ratio(r[0], tv and tv[0]), 1) if conveyor else "", fmt(ratio(r[0], dl and dl[0]), 1) if conveyor else "",
            fmt((row or {}).get("cpu_cores_busy") if r else None, 2), fmt(mem(row, "gpu_mem_peak_mib")),
            fmt(mem(row, "host_mem_peak_mib")))
        md.append(line)
    return md + [""], figures


def check(name, measured, ok):
    return {"target": name, "measured": measured, "met": ok}


def targets(roles):
    """Issue 34's targets from section 1 (the robustness sweep's come from results_robustness):
    (the realistic set's rows first, the uniform set's last)."""
    c, d = roles.get((HEADLINE, "conveyor_py_fused_on")), roles.get((HEADLINE, "dali_fused"))
    rc, rd = rate(c), rate(d)
    x = ratio(rc and rc[0], rd and rd[0])
    first = [check("Realistic set, fused: Conveyor through conveyor.torch.Loader ≥ %.2f× DALI 2.4 (same run)" %
                   TARGETS["dali"], "%s vs %s images/s = %s×" % (fmt(rc and rc[0]), fmt(rd and rd[0]), fmt(x, 2)),
                   None if x is None else x >= TARGETS["dali"])]
    slow = ratio(rc and rc[1], rc and rc[0])
    first.append(check("Realistic set, Conveyor fused (Loader): slowest block ≥ %.2f× the median" %
                       TARGETS["slowest_block"],
                       "%s vs %s images/s = %s×" % (fmt(rc and rc[1]), fmt(rc and rc[0]), fmt(slow, 2)),
                       None if slow is None else slow >= TARGETS["slowest_block"]))
    gm, dgm = mem(c, "gpu_mem_peak_mib"), mem(d, "gpu_mem_peak_mib")
    last = [check("Realistic set, fused: GPU memory peak, Conveyor ≤ DALI", "%s vs %s MiB" % (fmt(gm), fmt(dgm)),
                  None if gm is None or dgm is None else gm <= dgm)]
    cc, dc = (c or {}).get("cpu_cores_busy") if rc else None, (d or {}).get("cpu_cores_busy") if rd else None
    last.append(check("Realistic set, fused: CPU cores busy, Conveyor ≤ DALI", "%s vs %s" % (fmt(cc, 2), fmt(dc, 2)),
                      None if rc is None or rd is None or cc is None or dc is None else cc <= dc))
    # The issue's 36,000 was `conveyor bench`'s figure: the C++ row, and the Loader's beside it; both count.
    ucli, upy = rate(roles.get((SECOND, "conveyor_cli_fused_on"))), rate(roles.get((SECOND, "conveyor_py_fused_on")))
    measured = [u[0] for u in (ucli, upy) if u]
    last.append(check("Uniform set, Conveyor fused, C++ (`conveyor bench`, as the issue measured it) and Loader: "
                      "not below %s images/s" % fmt(TARGETS["uniform"]),
                      "C++ %s, Loader %s images/s" % (fmt(ucli and ucli[0]), fmt(upy and upy[0])),
                      min(measured) >= TARGETS["uniform"] if measured else None))
    return first, last


def peer_targets(roles):
    """Issue 13's end-to-end targets against torchvision and the DataLoader, on the headline set."""
    r = rate(roles.get((HEADLINE, "conveyor_py_fused_on")))
    out = []
    for role, key, name in (("torchvision_gpu", "torchvision", "torchvision GPU pipeline"),
                            ("dataloader", "dataloader", "DataLoader")):
        peer = rate(roles.get((HEADLINE, role)))
        x = ratio(r and r[0], peer and peer[0])
        out.append(check("End to end (realistic set): Conveyor ≥ %g× the %s" % (TARGETS[key], name),
                         "%s vs %s images/s = %s×" % (fmt(r and r[0]), fmt(peer and peer[0]), fmt(x, 1)),
                         None if x is None else x >= TARGETS[key]))
    return out
