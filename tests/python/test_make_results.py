"""bench/make_results.py's section 3 (bench/results_sweeps.py) on raw results written here: the sweep
tables, and the default setting measured again by every axis as Conveyor/DALI pairs with their
median ratio (the figure the README quotes). Fresh random rates each run; the expectations are
computed here, not copied."""
import json
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEFAULTS = {"batch": "256", "threads": "8", "size": "500x375", "prefetch": "2"}
OTHERS = {"batch": ["32", "512"], "threads": ["1", "16"], "size": ["250x190"], "prefetch": ["4"]}


def _write(raw, name, row):
    with open(os.path.join(raw, name + ".json"), "w") as f:
        json.dump(row, f)


def _conveyor(rate, tags):  # `conveyor bench --json` as measure.py leaves it
    return {"samples_per_s": {"median": rate, "min": rate * 0.97, "max": rate * 1.02},
            "ms_per_iteration": {"cpu_stage": 1.0, "gpu_issue": 9.5, "gpu_wait": 0.0, "idle": 0.0}, "tags": tags}


def _dali(rate, tags):  # dali_e2e.py's row
    return {"images_per_s": rate, "images_per_s_min": rate * 0.95, "images_per_s_max": rate * 1.05, "tags": tags}


def _run(raw, out):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "make_results.py"), "--raw", raw, "--out", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(out, "RESULTS.md")) as f:
        return f.read()


def _fmt(x):
    return "{:,.0f}".format(x)


def test_repeated_default_setting_gives_pairs_and_their_median(tmp_path):
    rng = random.Random()
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    pairs = []
    for axis, value in DEFAULTS.items():
        c, d = rng.uniform(15000, 30000), rng.uniform(15000, 30000)
        pairs.append((axis, c, d))
        _write(raw, "sweep_%s_conveyor_%s" % (axis, value), _conveyor(c, {"axis": axis, "value": value, "who": "conveyor"}))
        _write(raw, "sweep_%s_dali_%s" % (axis, value), _dali(d, {"axis": axis, "value": value, "who": "dali"}))
        for v in OTHERS[axis]:  # other points of the axis: in its table, not among the repeats
            _write(raw, "sweep_%s_conveyor_%s" % (axis, v), _conveyor(1000.0, {"axis": axis, "value": v, "who": "conveyor"}))
            _write(raw, "sweep_%s_dali_%s" % (axis, v), _dali(2000.0, {"axis": axis, "value": v, "who": "dali"}))
    c1, d1 = rng.uniform(15000, 30000), rng.uniform(15000, 30000)
    pairs.append(("section 1", c1, d1))
    _write(raw, "conveyor_cli_fused_capture", _conveyor(c1, {"role": "conveyor_cli_fused_on", "path": "cli"}))
    _write(raw, "dali_fused", _dali(d1, {"role": "dali_fused"}))

    md = _run(str(raw), str(out))
    section = md[md.index("### The same setting, measured again"):]
    for where, c, d in pairs:
        assert "| %s | %s | %s | %.2f |" % (where, _fmt(c), _fmt(d), c / d) in section, (where, section)
    assert "| 32 |" not in section.split("## Not measured")[0]  # a non-default point is no repeat
    ratios = sorted(c / d for _, c, d in pairs)
    summary = "× DALI: median %.2f of 5 pairs (%.2f–%.2f)" % (statistics.median(ratios), ratios[0], ratios[-1])
    assert summary in section, section
    cs = [c for _, c, _ in pairs]
    assert "Conveyor %s–%s images/s (spread %s%%)" % (_fmt(min(cs)), _fmt(max(cs)),
                                                        _fmt(100 * (max(cs) - min(cs)) / min(cs))) in section
    # Each axis still has its own table with every point.
    for axis in DEFAULTS:
        assert "### images/s against %s" % axis in md


def test_a_missing_dali_point_leaves_its_pair_out_of_the_median(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    _write(raw, "sweep_batch_conveyor_256", _conveyor(20000.0, {"axis": "batch", "value": "256", "who": "conveyor"}))
    _write(raw, "sweep_batch_dali_256", {"skipped": "cannot import nvidia.dali", "tags": {"axis": "batch", "value": "256", "who": "dali"}})
    _write(raw, "sweep_threads_conveyor_8", _conveyor(24000.0, {"axis": "threads", "value": "8", "who": "conveyor"}))
    _write(raw, "sweep_threads_dali_8", _dali(20000.0, {"axis": "threads", "value": "8", "who": "dali"}))
    md = _run(str(raw), str(out))
    section = md[md.index("### The same setting, measured again"):]
    assert "| batch | 20,000 | — | — |" in section
    assert "× DALI: median 1.20 of 1 pairs (1.20–1.20)" in section
    assert "Conveyor 20,000–24,000 images/s (spread 20%)" in section
    assert "DALI 20,000" not in section  # one DALI figure has no spread


def test_without_repeats_there_is_no_such_table(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    _write(raw, "sweep_batch_conveyor_64", _conveyor(20000.0, {"axis": "batch", "value": "64", "who": "conveyor"}))
    md = _run(str(raw), str(out))
    assert "### images/s against batch" in md
    assert "The same setting, measured again" not in md


def _py(rate, lo, hi, gpu_mib, tags):  # conveyor_e2e.py's row as measure.py leaves it
    return {"images_per_s": rate, "images_per_s_min": lo, "images_per_s_max": hi,
            "ms_per_iteration": {"cpu_stage": rate / 1e5, "gpu_issue": 9.0, "gpu_wait": 0.0, "idle": 0.0},
            "measure": {"gpu_mem_peak_mib": gpu_mib, "host_mem_peak_mib": 250.0}, "tags": tags}


def test_a_pair_measured_in_several_processes_gives_the_median_process(tmp_path):
    rng = random.Random()
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    conveyor, dali = [], []
    for p in range(3):
        c = rng.uniform(15000, 30000)
        lo, hi, gpu = c * rng.uniform(0.8, 0.99), c * rng.uniform(1.01, 1.2), rng.uniform(900, 1100)
        conveyor.append((c, lo, hi, gpu))
        _write(raw, "conveyor_py_fused_capture" + ("_p%d" % (p + 1) if p else ""),
               _py(c, lo, hi, gpu, {"role": "conveyor_py_fused_on", "path": "python"}))
        d = rng.uniform(15000, 30000)
        dali.append(d)
        _write(raw, "dali_fused" + ("_p%d" % (p + 1) if p else ""), _dali(d, {"role": "dali_fused"}))
    # A process that failed is left out of the median, and counted.
    _write(raw, "dali_fused_p4", {"error": "timed out after 180 s", "tags": {"role": "dali_fused"}})
    md = _run(str(raw), str(out))
    cm, dm = statistics.median(c for c, _, _, _ in conveyor), statistics.median(dali)
    target = "| End to end, fused: Conveyor (Python, capture on) ≥ 1.25× DALI 2.4 | %s vs %s images/s = %.2f× | %s |" % (
        _fmt(cm), _fmt(dm), cm / dm, "met" if cm / dm >= 1.25 else "**missed**")
    assert target in md, md
    row = [line for line in md.splitlines() if line.startswith("| Conveyor, Python loop: fused ROI decode + resize, graph capture on")][0]
    listed = " / ".join(_fmt(c) for c, _, _, _ in sorted(conveyor))
    assert "3 processes: %s" % listed in row, row
    assert "| %s (%s–%s) |" % (_fmt(cm), _fmt(min(x[1] for x in conveyor)), _fmt(max(x[2] for x in conveyor))) in row, row
    median_process = sorted(conveyor)[1]
    assert "CPU stage %.2f" % (median_process[0] / 1e5) in row, row  # the median process's split
    assert "| %s | 250 |" % _fmt(max(x[3] for x in conveyor)) in row, row  # the largest GPU memory peak
    dali_row = [line for line in md.splitlines() if line.startswith("| DALI 2.4: decoders.image_random_crop")][0]
    assert "3 processes: %s (1 failed)" % " / ".join(_fmt(d) for d in sorted(dali)) in dali_row, dali_row


def test_a_cpp_row_shows_its_decoder_split(tmp_path):
    rng = random.Random()
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    row = _conveyor(rng.uniform(15000, 30000), {"role": "conveyor_cli_fused_on", "path": "cli"})
    call, share, host, gpu, cuda = (rng.uniform(5, 15), rng.uniform(0.3, 0.9), rng.uniform(4, 9), rng.uniform(4, 9),
                                    rng.uniform(4, 9))
    row["decoder_ms_per_call"] = {"slot_wait": 0.01, "classify": 0.4, "decode": call - 0.5, "cpu_path": 0.0,
                                  "call": call, "slot_pending": 0.0}
    row["decoder_mix"] = {"engines_images_per_call": 256 * share, "cuda_images_per_call": 256 * (1 - share),
                          "cpu_images_per_call": 0.0, "engines_share": share, "engines_host_ms_per_batch": host,
                          "engines_gpu_ms_per_batch": gpu, "cuda_ms_per_call": cuda, "engines_rate": 25000.0,
                          "cuda_rate": 15000.0}
    _write(raw, "conveyor_cli_fused_capture", row)
    md = _run(str(raw), str(out))
    line = [x for x in md.splitlines() if x.startswith("| Conveyor, C++ (`conveyor bench`): fused, capture on")][0]
    expected = "decoder call %.2f ms: engines %.0f%% (batch %.2f ms host, %.2f GPU), CUDA backend %.2f ms" % (
        call, 100 * share, host, gpu, cuda)
    assert expected in line, line
