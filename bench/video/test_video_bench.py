"""Tests of the video benchmark's scripts (no GPU, no DALI): the results page from raw rows of every
contender's shape (ratios, the target, NVDEC windows, skipped and failed rows, CPU fallbacks), the
clip arithmetic run.sh repeats, and the FFmpeg stubs a bundle carries (a versioned library replaced
by its stub still satisfies a BIND_NOW consumer, and a call says what happened).

    /usr/bin/python3 -m pytest -q bench/video
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))  # ffmpeg_stubs (tools/gpu_bundle.sh's)
import ffmpeg_stubs  # noqa: E402
import video_common  # noqa: E402
import video_results  # noqa: E402


def write(raw, name, row, nvdec=None, log=None):
    with open(os.path.join(raw, name + ".json"), "w") as f:
        json.dump(row, f)
    if nvdec is not None:
        with open(os.path.join(raw, name + ".nvdec.csv"), "w") as f:
            f.write("# source: test samples\n" + "".join("%.3f,%.1f\n" % s for s in nvdec))
    if log is not None:
        with open(os.path.join(raw, name + ".log"), "w") as f:
            f.write(log)


def tags(role, codec="h264", stride=1):
    return {"role": role, "codec": codec, "stride": str(stride)}


def cli_row(codec, median, slowest, stride=1):
    return {"tags": tags("conveyor_cli", codec, stride), "batch_size": 8, "iterations": 10,
            "samples_per_s": {"median": median, "min": slowest, "max": median * 1.1,
                              "repeats": [median, slowest, median]},
            "cpu_cores_busy": 3.0, "measure": {"gpu_mem_peak_mib": 900.0}}


def py_row(role, codec, median, slowest, window, stride=1):
    figures = {"images_per_s": median, "images_per_s_min": slowest, "images_per_s_max": median,
               "repeats_images_per_s": [median, slowest]}
    row = video_common.clip_figures(figures, timed_window_epoch=window)
    row.update(tags=tags(role, codec, stride), cpu_cores_busy=1.5, measure={"gpu_mem_peak_mib": 700.0})
    return row


def make_page(tmp_path):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    (raw / "machine.txt").write_text("gpu: NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\nbatch: 8\ndevice: gpu\n")
    (raw / "data_h264.txt").write_text("files: 24 x 1280x720\nbitrate: 3.90 Mbit/s mean\n")
    (raw / "skipped.txt").write_text("hevc_s2_pair: skipped, 190 s spent\n")
    # Conveyor C++: 3 blocks of 80 clips at 200, 160, 200 clips/s = 1.3 s timed; busy until t = 110.
    busy = [(100.0 + 0.2 * i, 0.0 if i < 10 else 70.0) for i in range(51)] + [(110.4, 0.0), (110.6, 0.0)]
    write(raw, "h264_s1_conveyor_cli", cli_row("h264", 200.0, 160.0), nvdec=busy,
          log="op \"readers.video\" (reader): NVDEC not used for \"a.mp4\": NVDEC unavailable\n")
    write(raw, "h264_s1_dali_legacy", py_row("dali_legacy", "h264", 100.0, 80.0, [50.0, 51.0]),
          nvdec=[(49.5, 0.0), (50.2, 30.0), (50.8, 50.0), (51.5, 0.0)])
    write(raw, "h264_s1_conveyor_python", py_row("conveyor_python", "h264", 180.0, 150.0, [10.0, 11.0]))
    write(raw, "hevc_s1_conveyor_cli", cli_row("hevc", 90.0, 85.0))
    write(raw, "hevc_s1_dali_legacy", {"tags": tags("dali_legacy", "hevc"), "skipped": "cannot import nvidia.dali"})
    write(raw, "hevc_s1_torchcodec", {"tags": tags("torchcodec", "hevc"), "error": "rc 1; end of its log:\nboom"})
    subprocess.run([sys.executable, os.path.join(HERE, "video_results.py"), "--raw", str(raw), "--out", str(out)],
                   check=True, capture_output=True, text=True)
    return (out / "RESULTS.md").read_text(), json.loads((out / "results.json").read_text())


def test_the_page_has_ratios_targets_and_the_device(tmp_path):
    md, results = make_page(tmp_path)
    assert "Device: **NVIDIA H100 80GB HBM3**" in md
    lines = [line for line in md.splitlines() if line.startswith("| H.264 | 1 |")]
    assert lines[0].startswith("| H.264 | 1 | Conveyor, `conveyor bench` (C++) | 200.0 (160.0) | 3200 (2560) | 2.00x (2.00x) |")
    assert "| 1.80x (1.88x) |" in lines[1]  # the Python row against the same DALI row
    assert "| 100.0 (80.0) | 1600 (1280) | — |" in lines[2]
    targets = {(t["codec"], t["stride"]): t["met"] for t in results["targets"]}
    assert targets == {("h264", 1): True, ("hevc", 1): None}
    assert "- H.264, stride 1: met (median 2.00x, slowest block 2.00x)" in md
    assert "- HEVC, stride 1: not judged (no DALI readers.video row)" in md
    assert "skipped: cannot import nvidia.dali" in md and "error: rc 1; end of its log:" in md
    assert "hevc_s2_pair: skipped" in md and "Data H.264: files 24 x 1280x720, bitrate 3.90 Mbit/s mean" in md


def test_nvdec_windows_printed_and_estimated(tmp_path):
    md, results = make_page(tmp_path)
    rows = {r["name"]: r for r in results["rows"]}
    # DALI's window [50, 51] holds the 30 and 50 samples only.
    assert rows["h264_s1_dali_legacy"]["nvdec"] == {"mean": 40.0, "max": 50.0, "samples": 2, "window": "timed window"}
    # The CLI's 1.3 timed seconds end at its last busy sample (110.0): 108.8 ... 110.0, all busy.
    cli = rows["h264_s1_conveyor_cli"]["nvdec"]
    assert (cli["mean"], cli["max"], cli["samples"]) == (70.0, 70.0, 7) and "estimated" in cli["window"]
    assert "| 70.0 / 70.0 (est.) |" in md
    assert rows["hevc_s1_conveyor_cli"]["nvdec"] is None  # no sampler file
    assert "1 file(s) decoded on the CPU, first: op \"readers.video\" (reader): NVDEC not used" in md


def test_nvdec_summary_falls_back_to_the_whole_process():
    samples = [(1.0, 10.0), (2.0, 30.0)]
    assert video_results.nvdec_summary(samples)["window"] == "whole process"
    assert video_results.nvdec_summary(samples, window=[5.0, 6.0])["mean"] == 20.0
    assert video_results.nvdec_summary([]) is None


@pytest.mark.parametrize("frames,stride,clips", [(150, 1, 9), (150, 2, 8), (50, 1, 3), (31, 2, 1), (30, 2, 0)])
def test_clip_starts_match_run_sh(frames, stride, clips):
    assert len(video_common.clip_starts(frames, stride)) == clips
    span = 15 * stride + 1  # run.sh clips_per_epoch
    assert (0 if frames < span else (frames - span) // 16 + 1) == clips


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("readelf")), reason="needs gcc and readelf")
def test_a_stub_satisfies_a_bind_now_consumer_and_says_when_called(tmp_path):
    def sh(*cmd):
        subprocess.run(cmd, check=True, cwd=tmp_path, capture_output=True, text=True)

    (tmp_path / "dep.c").write_text("int dep_value[4] = {1};\nint dep_old(void) { return 1; }\n"
                                    "int dep_new(void) { return 2; }\nint dep_plain(void) { return 3; }\n"
                                    "__asm__(\".symver dep_old, dep_f@DEP_1\");\n"
                                    "__asm__(\".symver dep_new, dep_f@@DEP_2\");\n")
    (tmp_path / "dep.map").write_text("DEP_1 { global: dep_value; dep_plain; local: *; };\nDEP_2 { } DEP_1;\n")
    sh("gcc", "-shared", "-fPIC", "-o", "libdep.so.1", "dep.c", "-Wl,-soname,libdep.so.1", "-Wl,--version-script=dep.map")
    (tmp_path / "use.c").write_text("extern int dep_value[]; int dep_f(void); int dep_plain(void);\n"
                                    "int use(void) { return dep_f() + dep_plain() + dep_value[0]; }\n")
    sh("gcc", "-shared", "-fPIC", "-o", "libuse.so", "use.c", "-L.", "-l:libdep.so.1", "-Wl,-z,now")
    os.makedirs(tmp_path / "work")
    ffmpeg_stubs.make_stub(str(tmp_path / "libdep.so.1"), "libdep.so.1", str(tmp_path / "stub.so"), str(tmp_path / "work"))
    os.replace(tmp_path / "stub.so", tmp_path / "libdep.so.1")
    probe = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1], mode=2); print('loaded', flush=True); "
             "lib.use() if len(sys.argv) > 2 else None")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path))
    loaded = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "libuse.so")], env=env,
                            capture_output=True, text=True)
    assert loaded.returncode == 0 and "loaded" in loaded.stdout, loaded.stderr
    called = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "libuse.so"), "call"], env=env,
                            capture_output=True, text=True)
    assert called.returncode != 0
    assert "libdep.so.1: dep_f called, but the GPU bundle carries a stub of this library" in called.stderr
