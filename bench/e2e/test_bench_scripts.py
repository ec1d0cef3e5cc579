"""Tests of the benchmark harness itself (no GPU, no torch, no DALI): the results page judges each
target from the figures, measure.py parses and reports what its child did, --cpu-smoke keeps the
options a sweep passes.

    /usr/bin/python3 -m pytest -q bench/e2e
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402


def write(folder, name, row):
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(row, f)


def row(role, rate=None, gpu_mib=None, **extra):
    r = {"tags": {"role": role}, "label": role, "measure": {"gpu_mem_peak_mib": gpu_mib, "host_mem_peak_mib": 100.0}}
    if rate is not None:
        r.update(images_per_s=rate, images_per_s_min=rate * 0.9, images_per_s_max=rate * 1.1, cpu_cores_busy=2.0)
    r.update(extra)
    return r


def make_results(raw, out):
    subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "make_results.py"), "--raw", raw,
                    "--out", out], check=True, capture_output=True, text=True)
    with open(os.path.join(out, "RESULTS.md")) as f:
        md = f.read()
    with open(os.path.join(out, "results.json")) as f:
        return md, {t["target"]: t["met"] for t in json.load(f)["targets"]}


def test_results_judge_each_target_from_the_figures(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    write(raw, "a", row("conveyor_py_fused_on", 30000.0, gpu_mib=900.0))
    write(raw, "b", row("dali_fused", 23000.0, gpu_mib=1200.0))
    write(raw, "c", row("conveyor_py_unfused_on", 24000.0, gpu_mib=1500.0))
    write(raw, "d", row("dali_unfused", 20000.0, gpu_mib=1200.0))
    write(raw, "e", row("torchvision_gpu", 1600.0))
    write(raw, "f", row("dataloader", 7000.0))
    write(raw, "g", row("conveyor_overhead_on", us_per_iteration=15.0, us_per_iteration_min=14.0,
                        us_per_iteration_max=16.0))
    write(raw, "h", row("dali_overhead", us_per_iteration=240.0, us_per_iteration_min=230.0,
                        us_per_iteration_max=250.0))
    write(raw, "i", {"tags": {"role": "dali_decode"}, "label": "i", "error": "rc 1; end of its log:\nImportError"})
    write(raw, "j", {"tags": {"role": "torchvision_decode"}, "label": "j", "skipped": "no CUDA device"})
    with open(raw / "machine.txt", "w") as f:
        f.write("date_utc: 2026-11-23T08:00:00Z\ngpu: NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\n")
    md, met = make_results(str(raw), str(tmp_path / "out"))
    assert met["End to end, fused: Conveyor (Python, capture on) ≥ 1.25× DALI 2.4"] is True      # 1.30x
    assert met["End to end, unfused: Conveyor (Python, capture on) ≥ 1.25× DALI 2.4"] is False    # 1.20x
    assert met["GPU memory peak, fused: Conveyor ≤ DALI"] is True
    assert met["GPU memory peak, unfused: Conveyor ≤ DALI"] is False
    assert met["End to end: Conveyor ≥ 10× the torchvision GPU pipeline"] is True                # 18.75x
    assert met["End to end: Conveyor ≥ 5× the DataLoader"] is False                              # 4.3x
    assert met["Python iteration, captured: ≤ 20 µs"] is True
    assert met["Python iteration, captured: ≥ 10× faster than DALI's pipe.run()"] is True        # 16x
    assert "30,000 vs 23,000 images/s = 1.30×" in md
    assert "| gpu | NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB |" in md
    assert "- i: error: rc 1; end of its log:" in md
    assert "- j: skipped: no CUDA device" in md
    assert "Not run in this call" in md  # no sweep rows


def measure(tmp_path, code, *extra):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, os.path.join(HERE, "measure.py"), "--out", str(out), "--label", "x",
                           "--tag", "role=r", *extra, "--", sys.executable, "-c", code],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out) as f:
        return json.load(f)


def test_measure_reads_the_cli_json_and_times_the_process(tmp_path):
    code = ("import time; t = time.time()\nwhile time.time() - t < 0.3: pass\n"
            "print('bench: noise'); print('{\"samples_per_s\": {\"median\": 5.0,'); print(' \"min\": 4.0, \"max\": 6.0}}')")
    r = measure(tmp_path, code)
    assert r["samples_per_s"]["median"] == 5.0
    assert r["tags"] == {"role": "r"}
    assert r["measure"]["process_wall_s"] >= 0.3
    assert 0.2 <= r["cpu_cores_busy"] <= 1.2  # a busy loop on one core (others may share it), from outside
    assert r["cpu_source"].startswith("whole process")


def test_measure_reports_a_failing_child_with_its_stderr(tmp_path):
    r = measure(tmp_path, "import sys; print('bad input: sample 3', file=sys.stderr); sys.exit(3)")
    assert r["error"].startswith("rc 3")
    assert "bad input: sample 3" in r["error"]


def test_measure_stops_a_child_past_its_timeout(tmp_path):
    r = measure(tmp_path, "import time; time.sleep(30)", "--timeout", "1")
    assert r["error"].startswith("timeout after 1 s")
    assert r["measure"]["process_wall_s"] < 10


def test_measure_says_when_no_result_was_printed(tmp_path):
    r = measure(tmp_path, "print('no json here')")
    assert "no JSON result on stdout" in r["error"]


@pytest.mark.parametrize("argv,batch,threads", [(["x", "--cpu-smoke"], 8, 2),
                                                (["x", "--cpu-smoke", "--batch", "32"], 32, 2),
                                                (["x", "--cpu-smoke", "--threads=16"], 8, 16),
                                                (["x", "--batch", "32"], 32, 8)])
def test_cpu_smoke_keeps_the_options_given(monkeypatch, argv, batch, threads):
    import argparse
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.delenv("CONVEYOR_BENCH_BATCH", raising=False)
    monkeypatch.delenv("CONVEYOR_BENCH_THREADS", raising=False)
    ap = argparse.ArgumentParser()
    common.add_common_args(ap)
    args = ap.parse_args(argv[1:])
    common.apply_smoke(args, batch=8, threads=2)
    assert (args.batch, args.threads) == (batch, threads)


def test_jpeg_files_says_what_it_expected(tmp_path):
    with pytest.raises(SystemExit, match="expected JPEG files under"):
        common.jpeg_files(str(tmp_path))
    with pytest.raises(SystemExit, match="expected --data"):
        common.jpeg_files(str(tmp_path / "missing"))


def test_run_timed_reads_the_probe_around_the_timed_repeats_only():
    import argparse
    calls = {"steps": 0}

    def step():
        calls["steps"] += 1

    args = argparse.Namespace(no_epoch=False, warmup=3, repeats=2, iterations=5)
    figures = common.run_timed(step, lambda: None, 8, 4, args, probe=lambda: calls["steps"])
    before, after = figures["probe"]
    assert before == 4 + 3  # the untimed epoch and the warm-up ran before the first reading
    assert after - before == 2 * 5  # exactly the timed repeats between the readings
    assert "probe" not in common.run_timed(step, lambda: None, 8, 4, args)
