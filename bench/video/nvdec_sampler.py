#!/usr/bin/env python3
"""Samples the GPU's video decoder (NVDEC) utilisation while one contender runs, for the video
benchmark's "NVDEC util" column (bench/video/run.sh starts it before a contender and stops it with
SIGTERM after).

    nvdec_sampler.py --out FILE.csv [--period-ms 200] [--max-seconds 300] [--device 0]

FILE.csv: a header "# source: ..." line, then "epoch_seconds,decoder_percent" lines, flushed as they
come, so a sampler killed hard still leaves what it saw. Source, first available:
  1. NVML through pynvml: nvmlDeviceGetDecoderUtilization (the driver's average over its own
     sampling period, which it reports; every engine of the GPU together);
  2. `nvidia-smi --query-gpu=utilization.decoder -lms PERIOD` (the same counter), stamped on arrival;
  3. neither (no GPU here): "# unavailable: why" and exit 0, so a CPU smoke run goes on.
It never outlives --max-seconds, whatever happens to the process that started it.
"""
import argparse
import os
import signal
import subprocess
import sys
import time


class Stop(Exception):
    pass


def on_term(*_):
    raise Stop()


def nvml_source(device):
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device)
        util, period_us = pynvml.nvmlDeviceGetDecoderUtilization(handle)
        del util
    except Exception as e:  # no pynvml, no driver, or a GPU without the counter
        return None, "pynvml: %s: %s" % (type(e).__name__, e)

    def read():
        return float(pynvml.nvmlDeviceGetDecoderUtilization(handle)[0])

    return read, "NVML nvmlDeviceGetDecoderUtilization (driver sampling period %d ms)" % (period_us // 1000)


def sample_nvml(read, out, period, deadline):
    while time.time() < deadline:
        out.write("%.3f,%.1f\n" % (time.time(), read()))
        out.flush()
        time.sleep(period)


def sample_smi(out, period, deadline, device):
    cmd = ["nvidia-smi", "-i", str(device), "--query-gpu=utilization.decoder", "--format=csv,noheader,nounits",
           "-lms", str(int(period * 1000))]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in child.stdout:
            value = line.strip()
            if value.replace(".", "", 1).isdigit():
                out.write("%.3f,%s\n" % (time.time(), value))
                out.flush()
            if time.time() >= deadline:
                break
    finally:
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()


def have_smi(device):
    try:
        r = subprocess.run(["nvidia-smi", "-i", str(device), "--query-gpu=utilization.decoder",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
        return r.returncode == 0 and r.stdout.strip().replace(".", "", 1).isdigit(), r.stderr.strip() or r.stdout.strip()
    except Exception as e:
        return False, "%s: %s" % (type(e).__name__, e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--period-ms", type=float, default=200)
    ap.add_argument("--max-seconds", type=float, default=300)
    ap.add_argument("--device", type=int, default=int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0))
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    deadline = time.time() + args.max_seconds
    period = args.period_ms / 1000.0
    with open(args.out, "w") as out:
        try:
            read, why = nvml_source(args.device)
            if read is not None:
                out.write("# source: %s, %d ms samples\n" % (why, args.period_ms))
                out.flush()
                sample_nvml(read, out, period, deadline)
                return 0
            ok, smi_why = have_smi(args.device)
            if ok:
                out.write("# source: nvidia-smi utilization.decoder -lms %d (%s)\n" % (args.period_ms, why))
                out.flush()
                sample_smi(out, period, deadline, args.device)
                return 0
            out.write("# unavailable: %s; nvidia-smi: %s\n" % (why, smi_why or "not found"))
        except (Stop, KeyboardInterrupt):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
