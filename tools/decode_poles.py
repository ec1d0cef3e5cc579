#!/usr/bin/env python3
"""Which image holds each slow decode call: the GPU decoder's trace lines (CONVEYOR_JPEG_TRACE=N,
CONVEYOR_JPEG_TRACE_FROM=K on stderr; operators/decoders/decode_trace.cc) read back, one call each.

A call ends when its last engines' part or its last CUDA-backend / CPU thread ends. A call slower
than `--slow` times the median call is held by one image when a host thread ends it and that one
image took most of the call (`--share`); else by the engines (their part ended last) or by the host
side as a whole. Prints, per trace file, the calls' median and total, each holder's calls and their
time beyond the median call, and the slowest calls with their longest image.

  tools/decode_poles.py [--from 20] [--slow 1.3] [--share 0.6] [--top 5] bench.err ...
"""
import argparse
import re
import statistics
import sys

CALL = re.compile(r"decoder trace: call (\d+):")
PART = re.compile(r"\[part (\d+): (\d+) images (\d+)-(\d+) us: ([^\]]*)\]")
# thread:start-end[path kpixels subsampling[ p][ parse/wait/host/issue(transfer)][ aN/us][ gpu-huffman]]
IMAGE = re.compile(r" (\d+):(\d+)-(\d+)\[(CUDA backend|CPU|engines|nvJPEG2000) (\d+)k (\S+?)( p)?"
                   r"(?: (\d+)/(\d+)/(\d+)/(\d+)\((\d+)\))?( a\d+/\d+)?( gpu-huffman)?\]")


def parse_line(line):
    """One trace line: {call, parts: [(start_us, end_us, images)], images: [dict]}; None if not one."""
    m = CALL.search(line)
    if m is None:
        return None
    parts = [(int(p.group(3)), int(p.group(4)), int(p.group(2))) for p in PART.finditer(line)]
    images = []
    for i in IMAGE.finditer(line):
        images.append(dict(thread=int(i.group(1)), start=int(i.group(2)), end=int(i.group(3)), path=i.group(4),
                           kpixels=int(i.group(5)), subsampling=i.group(6), progressive=i.group(7) is not None,
                           host_us=int(i.group(10) or 0), issue_us=int(i.group(11) or 0),
                           gpu_huffman=i.group(14) is not None))
    return dict(call=int(m.group(1)), parts=parts, images=images)


def image_kind(img):
    return "%s%s %d MP %s" % (img["subsampling"], " progressive" if img["progressive"] else "",
                              round(img["kpixels"] / 1000), img["path"])


def timings(call):
    """(end of the engines' parts, end of the host threads, end of the call), milliseconds."""
    engines = max((p[1] for p in call["parts"]), default=0) / 1000
    host = max((i["end"] for i in call["images"]), default=0) / 1000
    return engines, host, max(engines, host)


def holder(call, median_ms, slow, share):
    engines, host, end = timings(call)
    if end <= slow * median_ms:
        return None
    if host > engines and call["images"]:
        longest = max(call["images"], key=lambda i: i["end"] - i["start"])
        if (longest["end"] - longest["start"]) / 1000 >= share * end:
            return image_kind(longest)
        return "host side"
    return "engines"


def analyse(calls, first=0, slow=1.3, share=0.6):
    calls = [c for c in calls if c["call"] >= first]
    if not calls:
        return None
    ends = [timings(c)[2] for c in calls]
    median = statistics.median(ends)
    held = {}
    for c, end in zip(calls, ends):
        h = holder(c, median, slow, share)
        if h is not None:
            n, excess = held.get(h, (0, 0.0))
            held[h] = (n + 1, excess + end - median)
    return dict(calls=len(calls), median_ms=median, total_ms=sum(ends), held=held,
                slowest=sorted(zip(ends, calls), key=lambda e: -e[0]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="first", type=int, default=0, help="first call counted (the warm-up's end)")
    ap.add_argument("--slow", type=float, default=1.3, help="a slow call: this many times the median call")
    ap.add_argument("--share", type=float, default=0.6, help="an image holds a call: this share of it")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("trace", nargs="+")
    args = ap.parse_args(argv)
    status = 0
    for path in args.trace:
        with open(path, errors="replace") as f:
            calls = [c for c in map(parse_line, f) if c is not None]
        r = analyse(calls, args.first, args.slow, args.share)
        if r is None:
            print("%s: no decoder trace lines from call %d (CONVEYOR_JPEG_TRACE=N, CONVEYOR_JPEG_TRACE_FROM)" %
                  (path, args.first), file=sys.stderr)
            status = 1
            continue
        held_ms = sum(e for _, e in r["held"].values())
        print("%s: %d calls, median %.1f ms, total %.0f ms; slow calls (> %.1fx median) %.0f ms beyond the median" %
              (path, r["calls"], r["median_ms"], r["total_ms"], args.slow, held_ms))
        for kind, (n, excess) in sorted(r["held"].items(), key=lambda kv: -kv[1][1]):
            print("  held by %-36s %4d calls, %7.0f ms beyond the median" % (kind, n, excess))
        for end, c in r["slowest"][:args.top]:
            engines, host, _ = timings(c)
            longest = max(c["images"], key=lambda i: i["end"] - i["start"]) if c["images"] else None
            print("  call %d: %.1f ms (engines %.1f, host %.1f); longest image %s" % (
                c["call"], end, engines, host,
                "%s, %.1f ms" % (image_kind(longest), (longest["end"] - longest["start"]) / 1000) if longest else "-"))
    return status


if __name__ == "__main__":
    sys.exit(main())
