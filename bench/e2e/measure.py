#!/usr/bin/env python3
"""Runs one contender as a child process and measures it from outside, the same way for every
library (a library's own counters are not comparable: torch.cuda.max_memory_allocated sees only
torch's allocator, DALI and Conveyor have pools of their own).

    measure.py --out RESULT.json --label NAME [--timeout S] [--env K=V ...] [--tag K=V ...] -- COMMAND ARGS...

| figure                  | how                                                                        |
|-------------------------|----------------------------------------------------------------------------|
| gpu_mem_peak_mib        | NVML (pynvml) device memory used, sampled every 10 ms while the child runs, |
|                         | minus the same reading just before it started: its CUDA context, pools,   |
|                         | libraries' workspaces. The GPU runs nothing else meanwhile. Fallback:     |
|                         | nvidia-smi every 100 ms.                                                    |
| gpu_mem_process_peak_mib| NVML's per-process figure for the child's processes, when NVML sees them   |
| host_mem_peak_mib       | peak of the sum of PSS (proportional set size: shared pages split between  |
|                         | the processes that map them) over the child and its descendants, sampled   |
|                         | every 200 ms (psutil); RSS where PSS cannot be read                        |
| main_maxrss_mib         | ru_maxrss of the largest process among the child and its reaped children   |
| process_cpu_cores_busy  | (user + system CPU of the child and its reaped children) / wall, whole run |
|                         | (start-up and warm-up included)                                             |

The child's result is the JSON object on its stdout (the last line that parses, or the whole
output for `conveyor bench --json`). These figures are added under "measure"; a contender that
measured no CPU figure of its own (the CLI) gets process_cpu_cores_busy as cpu_cores_busy. A child
that fails, times out or prints no JSON gives {"error": ...} with the end of its stderr.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

MIB = 1024.0 * 1024.0


class GpuMemory:
    def __init__(self):
        self.source, self._nvml, self._handle = None, None, None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0))
            self.source = "NVML device memory used (pynvml), 10 ms samples, minus the reading before start"
        except Exception as e:  # no pynvml or no driver: try nvidia-smi
            self._why = "%s: %s" % (type(e).__name__, e)
            try:
                subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=True, timeout=10)
                self.source = "nvidia-smi memory.used, 100 ms samples, minus the reading before start"
            except Exception:
                self.source = None

    @property
    def period(self):
        return 0.01 if self._nvml else 0.1

    def used(self):
        if self._nvml:
            return self._nvml.nvmlDeviceGetMemoryInfo(self._handle).used
        if self.source:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                                 capture_output=True, text=True, timeout=10).stdout
            return float(out.split()[0]) * MIB
        return None

    def process_used(self, pids):
        if not self._nvml:
            return None
        try:
            procs = self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handle)
        except Exception:
            return None
        total = [p.usedGpuMemory or 0 for p in procs if p.pid in pids]
        return sum(total) if total else None


def tree(pid):
    try:
        import psutil
        p = psutil.Process(pid)
        return [p] + p.children(recursive=True)
    except Exception:
        return []


def host_memory(procs):
    total, kind = 0, "PSS"
    for p in procs:
        try:
            total += p.memory_full_info().pss
        except Exception:
            try:
                total += p.memory_info().rss
                kind = "RSS"
            except Exception:
                pass
    return total, kind


def sample(child, gpu, base, peaks, stop):
    last_host = 0.0
    while not stop.is_set():
        if gpu.source:
            try:
                peaks["gpu"] = max(peaks["gpu"], gpu.used() - base)
            except Exception:
                pass
        now = time.monotonic()
        if now - last_host >= 0.2:
            last_host = now
            procs = tree(child.pid)
            if procs:
                total, kind = host_memory(procs)
                peaks["host"] = max(peaks["host"], total)
                peaks["host_kind"] = kind if kind == "RSS" else peaks.get("host_kind", "PSS")
                per = gpu.process_used({p.pid for p in procs})
                if per is not None:
                    peaks["gpu_process"] = max(peaks.get("gpu_process", 0), per)
        stop.wait(gpu.period)


def parse_result(stdout):
    lines = stdout.strip().splitlines()
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    starts = [i for i, line in enumerate(lines) if line.startswith("{")]
    for i in starts:
        try:
            return json.loads("\n".join(lines[i:]))
        except ValueError:
            continue
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--env", action="append", default=[], help="K=V for the child (repeatable)")
    ap.add_argument("--log", help="file for the child's stderr (default: OUT with .log)")
    ap.add_argument("--tag", action="append", default=[], help="K=V stored under \"tags\" (make_results.py "
                    "finds rows by them: role=..., axis=..., value=...)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        sys.exit("measure.py: expected a command after --, got none")
    env = dict(os.environ)
    for kv in args.env:
        key, sep, value = kv.partition("=")
        if not sep:
            sys.exit("measure.py: --env expects K=V, got %r" % kv)
        env[key] = value
    log_path = args.log or os.path.splitext(args.out)[0] + ".log"
    gpu = GpuMemory()
    base = gpu.used() if gpu.source else None
    peaks, stop, killed = {"gpu": 0, "host": 0}, threading.Event(), threading.Event()
    start = time.monotonic()
    with open(log_path, "w") as log:
        log.write("$ %s\n" % " ".join(command))
        log.flush()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, env=env, text=True,
                                 start_new_session=True)

        def kill():
            killed.set()
            os.killpg(child.pid, 9)

        timer = threading.Timer(args.timeout, kill)
        timer.start()
        sampler = threading.Thread(target=sample, args=(child, gpu, base or 0, peaks, stop), daemon=True)
        sampler.start()
        stdout = child.stdout.read()
        # wait4, not Popen.wait: the child's own rusage (its reaped workers included), untouched by
        # any nvidia-smi this process runs for sampling.
        _, status, usage = os.wait4(child.pid, 0)
        timer.cancel()
        child.returncode = rc = os.waitstatus_to_exitcode(status)
        if killed.is_set():
            rc = "timeout after %.0f s" % args.timeout
        wall = time.monotonic() - start
        stop.set()
        sampler.join()
        log.write("\n--- stdout ---\n" + (stdout or ""))
    cpu = usage.ru_utime + usage.ru_stime
    result = parse_result(stdout or "") if rc == 0 else None
    if result is None:
        with open(log_path) as f:
            tail = f.read()[-1500:]
        what = rc if isinstance(rc, str) else "rc %d%s" % (rc, "" if rc != 0 else ", no JSON result on stdout")
        result = {"label": args.label, "error": "%s; end of its log:\n%s" % (what, tail)}
    result["label"] = args.label
    result["tags"] = dict(t.partition("=")[::2] for t in args.tag)
    result["command"] = " ".join(command)
    result["measure"] = {
        "gpu_mem_peak_mib": round(peaks["gpu"] / MIB, 1) if gpu.source else None,
        "gpu_mem_baseline_mib": round(base / MIB, 1) if base is not None else None,
        "gpu_mem_process_peak_mib": round(peaks["gpu_process"] / MIB, 1) if "gpu_process" in peaks else None,
        "gpu_mem_source": gpu.source or "unavailable (%s)" % getattr(gpu, "_why", "no NVML, no nvidia-smi"),
        "host_mem_peak_mib": round(peaks["host"] / MIB, 1) if peaks["host"] else None,
        "host_mem_kind": peaks.get("host_kind", "unavailable (no psutil)" if not peaks["host"] else "PSS"),
        "main_maxrss_mib": round(usage.ru_maxrss / 1024.0, 1),
        "process_cpu_s": round(cpu, 2),
        "process_wall_s": round(wall, 2),
        "process_cpu_cores_busy": round(cpu / max(wall, 1e-9), 2),
    }
    if "cpu_cores_busy" not in result and "error" not in result and "skipped" not in result:
        result["cpu_cores_busy"] = result["measure"]["process_cpu_cores_busy"]
        result["cpu_source"] = "whole process (start-up and warm-up included)"
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    status = "error" if "error" in result else "ok"
    print("%-44s %s%s" % (args.label, status, "" if status != "ok" else "  %s" % summary(result)))
    return 0


def summary(r):
    if "images_per_s" in r:
        return "%.1f images/s, %.2f cores" % (r["images_per_s"], r.get("cpu_cores_busy", 0))
    if "samples_per_s" in r:
        return "%.1f samples/s (median)" % r["samples_per_s"]["median"]
    if "us_per_iteration" in r:
        return "%.2f us/iteration" % r["us_per_iteration"]
    if "skipped" in r:
        return "skipped: %s" % r["skipped"]
    return ""


if __name__ == "__main__":
    sys.exit(main())
