"""Tests of the benchmark harness itself (no GPU, no torch, no DALI): the results page judges each
target from the figures, measure.py parses and reports what its child did, --cpu-smoke keeps the
options a sweep passes, lib.sh's `dataset` keeps a set it already made, and run_all.sh and
run_robustness.sh, run against a fake bundle (a `conveyor` that prints bench JSON, a generator that
writes manifests), leave the raw files make_results.py reads and combine into one page.

    /usr/bin/python3 -m pytest -q bench/e2e
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import common  # noqa: E402


def write(folder, name, row):
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(row, f)


def row(role, rate=None, gpu_mib=None, data_set=None, **extra):
    tags = {"role": role}
    if data_set:
        tags.update(set=data_set, process="1")
    r = {"tags": tags, "label": role, "measure": {"gpu_mem_peak_mib": gpu_mib, "host_mem_peak_mib": 100.0}}
    if rate is not None:
        r.update(images_per_s=rate, images_per_s_min=rate * 0.9, images_per_s_max=rate * 1.1, cpu_cores_busy=2.0)
    r.update(extra)
    return r


def make_results(raw, out):
    subprocess.run([sys.executable, os.path.join(SUITE, "make_results.py"), "--raw", raw, "--out", out],
                   check=True, capture_output=True, text=True)
    with open(os.path.join(out, "RESULTS.md")) as f:
        md = f.read()
    with open(os.path.join(out, "results.json")) as f:
        return md, {t["target"]: t["met"] for t in json.load(f)["targets"]}


def test_results_judge_each_target_from_the_figures(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    write(raw, "a", row("conveyor_py_fused_on", 13000.0, gpu_mib=900.0, data_set="realistic", cpu_cores_busy=6.0))
    write(raw, "b", row("dali_fused", 10000.0, gpu_mib=1200.0, data_set="realistic", cpu_cores_busy=5.0))
    write(raw, "c", row("conveyor_py_fused_on", 38000.0, gpu_mib=900.0, data_set="uniform"))
    write(raw, "d", row("dali_fused", 25000.0, gpu_mib=1200.0, data_set="uniform"))
    write(raw, "e", row("torchvision_gpu", 1200.0, data_set="realistic"))
    write(raw, "f", row("dataloader", 3000.0, data_set="realistic"))
    write(raw, "g", row("conveyor_overhead_on", us_per_iteration=15.0, us_per_iteration_min=14.0,
                        us_per_iteration_max=16.0))
    write(raw, "h", row("dali_overhead", us_per_iteration=240.0, us_per_iteration_min=230.0,
                        us_per_iteration_max=250.0))
    write(raw, "i", {"tags": {"role": "dali_decode", "set": "realistic"}, "label": "i",
                     "error": "rc 1; end of its log:\nImportError"})
    write(raw, "j", {"tags": {"role": "torchvision_decode", "set": "realistic"}, "label": "j",
                     "skipped": "no CUDA device"})
    for variant, c, d in (("varied", 20000.0, 15000.0), ("varied_gray", 16000.0, 14000.0),
                          ("varied_444", 19000.0, 15500.0)):
        tags = {"sweep": "robustness", "set": variant}
        write(raw, "robust_%s_conveyor" % variant, {"samples_per_s": {"median": c, "min": c * 0.9, "max": c},
                                                    "tags": dict(tags, who="conveyor")})
        write(raw, "robust_%s_dali" % variant, row("", d, **{"tags": dict(tags, who="dali")}))
    with open(raw / "machine.txt", "w") as f:
        f.write("date_utc: 2026-11-23T08:00:00Z\ngpu: NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\n")
    md, met = make_results(str(raw), str(tmp_path / "out"))
    assert met["Realistic set, fused: Conveyor through conveyor.torch.Loader ≥ 1.25× DALI 2.4 (same run)"] is True  # 1.30x
    assert met["Realistic set, Conveyor fused (Loader): slowest block ≥ 0.85× the median"] is True               # 0.90x
    assert met["Robustness sweep, varied_gray: Conveyor ≥ 0.85× the varied set"] is False                         # 0.80x
    assert met["Robustness sweep, varied_444: Conveyor ≥ 0.85× the varied set"] is True                           # 0.95x
    assert met["Robustness sweep, varied_large: Conveyor ≥ 0.85× the varied set"] is None                         # not run
    assert met["Realistic set, fused: GPU memory peak, Conveyor ≤ DALI"] is True
    assert met["Realistic set, fused: CPU cores busy, Conveyor ≤ DALI"] is False                                   # 6 > 5
    assert met["Uniform set, Conveyor fused, C++ (`conveyor bench`, as the issue measured it) and Loader: "
               "not below 36,000 images/s"] is True  # the Loader's 38k; no C++ row here
    assert met["End to end (realistic set): Conveyor ≥ 10× the torchvision GPU pipeline"] is True                 # 10.8x
    assert met["End to end (realistic set): Conveyor ≥ 5× the DataLoader"] is False                               # 4.3x
    assert met["Python iteration, captured: ≤ 20 µs"] is True
    assert met["Python iteration, captured: ≥ 10× faster than DALI's pipe.run()"] is True        # 16x
    assert "13,000 vs 10,000 images/s = 1.30×" in md
    assert "16,000 vs 20,000 images/s = 0.80×" in md
    assert "| gpu | NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB |" in md
    assert "- i: error: rc 1; end of its log:" in md
    assert "- j: skipped: no CUDA device" in md
    assert "Not run in this call (bench/run_sweeps.sh)." in md  # no sweep rows
    assert "No manifests in this run's raw folder" in md


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


# ---- lib.sh's `dataset` and the scripts, against a fake bundle -------------------------------------

FAKE_GENERATOR = """#!%s
# make_test_images OUTDIR --dataset NAME --count N, as far as the scripts use it.
import os, sys
out, name, count = sys.argv[1], sys.argv[3], int(sys.argv[5])
if name == "broken":
    sys.exit("make_test_images: unknown set broken")
with open(os.path.join(os.path.dirname(out), "..", "calls"), "a") as f:
    f.write(name + "\\n")
lines = ["name\\tformat\\twidth\\theight\\tsubsampling\\tprogressive\\tquality\\tbytes"]
for i in range(count):
    png = name == "realistic" and i == 0
    with open(os.path.join(out, "img_%%05d.jpg" %% i), "wb") as f:
        f.write(b"\\x89PNG" if png else b"\\xff\\xd8" + bytes(100))
    lines.append("img_%%05d.jpg\\t%%s\\t%%d\\t375\\t%%s\\t%%d\\t90\\t102" %% (
        i, "png" if png else "jpeg", 3200 if i == 1 and name != "uniform" else 500, "444" if png else "420",
        1 if i == 2 and name == "varied_progressive" else 0))
with open(os.path.join(out, "MANIFEST.tsv"), "w") as f:
    f.write("\\n".join(lines) + "\\n")
print("%%s: %%d files, a summary paragraph." %% (name, count))
"""

# `conveyor bench --json` whose images/s depend on the data set the pipeline reads.
FAKE_CONVEYOR = """#!/usr/bin/env bash
case "$CONVEYOR_BENCH_DATA" in
  */realistic) r=11000 ;; */uniform) r=37000 ;; */varied) r=20000 ;; */varied_large) r=15000 ;; *) r=19000 ;;
esac
echo '{"pipeline": "fake",'
echo " \\"samples_per_s\\": {\\"min\\": $((r * 9 / 10)), \\"median\\": $r, \\"max\\": $r},"
echo ' "ms_per_iteration": {"cpu_stage": 1.0, "gpu_issue": 2.0, "gpu_wait": 0.0, "idle": 0.0}}'
"""


def fake_bundle(tmp_path):
    b = tmp_path / "bundle"
    for d in ("lib", "python", "bench"):
        (b / d).mkdir(parents=True)
    (b / "libconveyor_c.so").write_bytes(b"")
    (b / "make_test_images").write_text(FAKE_GENERATOR % sys.executable)
    (b / "conveyor").write_text(FAKE_CONVEYOR)
    for f in ("make_test_images", "conveyor"):
        os.chmod(b / f, 0o755)
    return b


def bench_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONVEYOR", "BENCH_", "PYTHONPATH"))}
    env.update(CONVEYOR_BENCH_WORK=str(tmp_path / "work"), OUT=str(tmp_path / "out"), PYTHON=sys.executable,
               DALI_PYTHON=sys.executable, DALI_SITE=str(tmp_path / "no_dali"))
    return env


def test_dataset_makes_a_set_once_and_copies_its_manifest(tmp_path):
    bundle = fake_bundle(tmp_path)
    script = """
source "%s/lib.sh"
find_bundle "%s" || exit 1
dataset "$WORK/data/varied_gray" varied_gray 8 || exit 1
dataset "$WORK/data/varied_gray" varied_gray 8 || exit 1
dataset "$WORK/data/varied_gray" varied_gray 9 || exit 1
dataset "$WORK/data/broken" broken 8 && exit 1
exit 0
""" % (SUITE, bundle)
    r = subprocess.run(["bash", "-c", script], env=bench_env(tmp_path), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    work = tmp_path / "work"
    assert (work / "data" / "calls").read_text().split() == ["varied_gray", "varied_gray"]  # kept once, remade at 9
    assert "dataset varied_gray: " in r.stdout and "already holds its 8 files" in r.stdout
    assert r.stdout.count("varied_gray: 8 files, a summary paragraph.") == 2  # printed when kept too
    manifest = (work / "raw" / "manifest_varied_gray.tsv").read_text().splitlines()
    assert len(manifest) == 1 + 9
    assert sorted(os.listdir(work / "data" / "varied_gray" / "0"))[:2] == ["MANIFEST.tsv", "img_00000.jpg"]
    assert "make_test_images --dataset broken --count 8 failed" in r.stderr
    assert not (work / "data" / "broken").exists()
    assert "data/varied_gray (9 files): " in (work / "raw" / "timings.txt").read_text()


@pytest.mark.parametrize("script,args,message", [
    ("run_all.sh", ["--frobnicate"], 'unknown argument "--frobnicate"'),
    ("run_all.sh", ["--processes", "0"], "--processes expects a positive integer"),
    ("run_all.sh", ["--sets", "realistic;uniform"], "--sets expects names like realistic,uniform"),
    ("run_robustness.sh", ["--only", "varied_cmyk"], 'unknown set "varied_cmyk"'),
    ("run_robustness.sh", ["--frobnicate"], 'unknown argument "--frobnicate"'),
])
def test_scripts_refuse_bad_arguments(tmp_path, script, args, message):
    r = subprocess.run(["bash", os.path.join(SUITE, script)] + args, env=bench_env(tmp_path), capture_output=True,
                       text=True)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def run_script(tmp_path, bundle, script, *args):
    r = subprocess.run(["bash", os.path.join(SUITE, script), "--bundle", str(bundle), "--cpu-smoke"] + list(args),
                       env=bench_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    with open(tmp_path / "out" / "RESULTS.md") as f:
        return f.read(), r.stdout


def test_the_scripts_leave_what_make_results_reads_and_combine_into_one_page(tmp_path):
    """Calls 6 and 7 of bench/README.md on one machine, with a fake bundle: no contender but the
    fake `conveyor bench` measures anything (the Python ones are skipped: no conveyor, torch or DALI
    here), which is enough to check the files' names and tags, the sets each row runs on, and that
    --keep-raw keeps call 6's results for call 7's page."""
    bundle = fake_bundle(tmp_path)
    raw = tmp_path / "work" / "raw"
    md, log = run_script(tmp_path, bundle, "run_all.sh", "--only", "e2e,decode")
    names = set(os.listdir(raw))
    for p in (1, 2, 3):
        assert {"e2e_realistic_conveyor_py_fused_capture_p%d.json" % p, "e2e_realistic_dali_fused_p%d.json" % p,
                "e2e_realistic_conveyor_py_unfused_capture_p%d.json" % p, "e2e_realistic_dali_unfused_p%d.json" % p,
                "e2e_uniform_conveyor_py_fused_capture_p%d.json" % p, "e2e_uniform_dali_fused_p%d.json" % p} <= names
    assert {"e2e_realistic_conveyor_cli_fused_capture.json", "e2e_uniform_conveyor_cli_fused_capture.json",
            "e2e_realistic_torchvision_gpu.json", "e2e_realistic_dataloader_15_workers.json",
            "decode_realistic_conveyor_cli_decode_only.json", "decode_realistic_torchvision_decode.json",
            "decode_uniform_conveyor_cli_decode_only.json", "decode_uniform_dali_decode.json",
            "manifest_realistic.tsv", "manifest_uniform.tsv", "timings.txt", "machine.txt"} <= names, names
    # The uniform set runs the short list only.
    assert not [n for n in names if n.startswith("e2e_uniform_") and ("unfused" in n or "eager" in n or
                                                                        "torchvision" in n or "dataloader" in n)]
    assert "decode_uniform_torchvision_decode.json" not in names
    with open(raw / "e2e_uniform_conveyor_py_fused_capture_p2.json") as f:
        py = json.load(f)
    assert py["tags"] == {"role": "conveyor_py_fused_on", "set": "uniform", "process": "2", "path": "python",
                          "via": "loader"}
    assert "--loader" in py["command"] and "/data/uniform" in py["command"]
    cpp = [line for line in md.splitlines() if line.startswith("| Conveyor, C++ (`conveyor bench`): fused, capture on")]
    assert "| 11,000 (9,900) |" in cpp[0] and "| 37,000 (33,300) |" in cpp[0], cpp
    assert "| realistic | 64 |" in md and "| uniform | 64 |" in md  # the data sets' table
    assert "| run_all/e2e, process 1 |" in md
    assert "Not run in this call (bench/run_robustness.sh)." in md

    # Call 7: the robustness sweep, then the remaining sections keeping call 6's raw results.
    md, log = run_script(tmp_path, bundle, "run_robustness.sh", "--only", "varied_large,varied_gray")
    assert "robustness sweep" not in log.lower() or "skipped" not in log  # nothing over budget
    assert "| varied_large | large files (≥ 3000 px) among them | 15,000 (13,500) | 0.75 |" in md, md
    assert "| varied_gray | grayscale files among them | 19,000 (17,100) | 0.95 |" in md, md
    assert "| varied_444 | 4:4:4 files among them | not run |" in md
    assert "| 11,000 (9,900) |" in md  # call 6's rows are still there
    md, _ = run_script(tmp_path, bundle, "run_all.sh", "--only", "overhead", "--keep-raw")
    assert "| 11,000 (9,900) |" in md and "| varied_large | large files" in md
    assert "conveyor_py_overhead_capture.json" in os.listdir(raw)
    assert "| run_robustness/varied_gray (data and both rows) |" in md and "| run_all/overhead |" in md
    # Without --keep-raw a call starts empty.
    md, _ = run_script(tmp_path, bundle, "run_all.sh", "--only", "overhead")
    assert "| 11,000 (9,900) |" not in md and not [n for n in os.listdir(raw) if n.startswith("e2e_")]


# ---- conveyor_e2e.py --loader: the Python loop run_all.sh measures, through conveyor.torch.Loader --

class FakeTensor:
    def __init__(self, batch):
        self.shape, self.dtype, self.device = (batch, 3, 224, 224), "float16", (1, 0)


class FakePipeline:
    """What conveyor.torch.Loader and conveyor_e2e.py use of a conveyor.Pipeline: iteration (dicts of
    outputs in output order), epoch_size and stage_times."""

    def __init__(self, yaml, files, batch):
        self.yaml, self.files, self.batch, self.batches = yaml, files, batch, 0

    def __iter__(self):
        return self

    def __next__(self):
        self.batches += 1
        return {"images_out": FakeTensor(self.batch), "labels": FakeTensor(self.batch)}

    def epoch_size(self, reader):
        assert reader == "reader"
        return self.files

    def stage_times(self):
        return {"iterations": self.batches, "cpu_stage": 0.001 * self.batches, "gpu_issue": 0.0, "gpu_wait": 0.0,
                "idle": 0.0}


def test_the_loader_path_runs_epochs_through_conveyor_torch_loader(tmp_path, monkeypatch):
    """conveyor_e2e.py --loader with the real conveyor.torch.Loader (python/conveyor/torch.py) over a
    fake pipeline and a fake torch: the untimed epoch, the warm-up and the timed blocks cross epoch
    ends (the Loader's StopIteration is followed by the next epoch), one pipeline batch per step."""
    import argparse
    import importlib.util
    import types
    package_dir = os.path.join(SUITE, "..", "python", "conveyor")
    if not os.path.exists(os.path.join(package_dir, "torch.py")):
        pytest.skip("python/conveyor/torch.py not found beside the suite")
    conveyor = types.ModuleType("conveyor")
    conveyor.__path__ = [package_dir]
    lib, tensor = types.ModuleType("conveyor._lib"), types.ModuleType("conveyor._tensor")
    lib.InvalidArgumentError, lib.DEVICE_CUDA_HOST = ValueError, 3
    tensor.HostView = lambda t: t
    fake_torch = types.ModuleType("torch")
    fake_torch.from_dlpack = lambda t: t
    for name, module in (("conveyor", conveyor), ("conveyor._lib", lib), ("conveyor._tensor", tensor),
                         ("torch", fake_torch)):
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("conveyor.torch", os.path.join(package_dir, "torch.py"))
    loader_module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "conveyor.torch", loader_module)
    spec.loader.exec_module(loader_module)
    data = tmp_path / "data" / "0"
    data.mkdir(parents=True)
    for i in range(64):
        (data / ("img_%05d.jpg" % i)).write_bytes(b"\xff\xd8")
    pipes = []
    conveyor.Pipeline = lambda yaml: pipes.append(FakePipeline(yaml, 64, 8)) or pipes[-1]
    import conveyor_e2e
    args = argparse.Namespace(yaml="train_fused.yaml", data=str(tmp_path / "data"), batch=8, loader=True,
                              no_epoch=False, warmup=1, repeats=2, iterations=3)
    result = conveyor_e2e.train(args, conveyor, False)
    assert pipes[0].batches == 1 + (8 - 1) + 1 + 2 * 3  # first step, rest of the epoch, warm-up, timed
    assert result["output"] == "images" and result["output_shape"] == [8, 3, 224, 224]
    assert result["files"] == 64 and result["repeats"] == 2 and result["stage_iterations"] == 6
    assert result["ms_per_iteration"]["cpu_stage"] == 1.0


def test_cuda_schedule_unset_changes_nothing(monkeypatch):
    monkeypatch.delenv("CONVEYOR_CUDA_SCHEDULE", raising=False)
    assert common.apply_cuda_schedule() is None


def test_cuda_schedule_refuses_an_unknown_value(monkeypatch):
    monkeypatch.setenv("CONVEYOR_CUDA_SCHEDULE", "sleepy")
    with pytest.raises(SystemExit) as e:
        common.apply_cuda_schedule()
    assert "CONVEYOR_CUDA_SCHEDULE" in str(e.value) and "blocking" in str(e.value) and "'sleepy'" in str(e.value)


def test_ab_beside_dali_interleaves_rows_and_gives_each_median(tmp_path):
    """bench/ab_beside_dali.sh with the fake bundle: two `conveyor bench` rows (the fake's figure
    depends on the data set only) and a DALI row that cannot run here (no DALI): every row runs
    once a round, in order, a run without a figure counts 0 and no ratio is given without DALI's."""
    bundle = fake_bundle(tmp_path)
    env = bench_env(tmp_path)
    env.update(AB_ROWS="a:cli b:cli:CONVEYOR_BENCH_THREADS=2 dali:dali", AB_ROUNDS="2", AB_FILES="8")
    r = subprocess.run(["bash", os.path.join(SUITE, "ab_beside_dali.sh"), "--bundle", str(bundle)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows = [line.split("\t")[:3] for line in (tmp_path / "out" / "ab.tsv").read_text().splitlines()]
    assert rows == [["a", "1", "11000"], ["b", "1", "11000"], ["dali", "1", "0"],
                    ["a", "2", "11000"], ["b", "2", "11000"], ["dali", "2", "0"]], rows
    assert "a: median 11000 images/s over 2 rounds (11000, 11000)\n" in r.stdout
    assert "x DALI" not in r.stdout
    env.update(AB_ROWS="a:torch")
    r = subprocess.run(["bash", os.path.join(SUITE, "ab_beside_dali.sh"), "--bundle", str(bundle)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and 'row "a:torch": kind must be py, cli or dali, got "torch"' in r.stderr, r.stderr
    r = subprocess.run(["bash", os.path.join(SUITE, "ab_beside_dali.sh"), "--frobnicate"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "expected no arguments or --bundle DIR" in r.stderr, r.stderr
