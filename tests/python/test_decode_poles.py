"""tools/decode_poles.py: which image holds each slow decode call, from the GPU decoder's trace.

Real lines first: five calls traced on an H200 (NVIDIA H200, 580.159.04, 2026-11-28; `conveyor bench`
on the realistic set, batch 256, CONVEYOR_JPEG_TRACE): every image of each batch must be read back
(the engines' parts' counts plus the host images make 256), and call 127, held 78 ms by one 9 MP
4:4:4 photo on the CUDA backend while the engines ended at 15 ms, must be named so. Then calls
written in decode_trace.cc's format with fresh random images, one of them given a long photo: the
tool must name that photo's kind for that call and no other call."""
import os
import random
import subprocess
import sys

from conftest import repo_file

TOOL = repo_file("tools/decode_poles.py", "decode_poles.py")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "decode_trace_h200.txt")
sys.path.insert(0, os.path.dirname(TOOL))
import decode_poles  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


def test_real_trace_lines_read_back_whole_and_the_holder_named():
    with open(DATA) as f:
        calls = [decode_poles.parse_line(line) for line in f]
    assert [c["call"] for c in calls] == [50, 51, 52, 53, 127]
    for c in calls:
        assert sum(p[2] for p in c["parts"]) + len(c["images"]) == 256, c["call"]
    held = decode_poles.holder(calls[-1], 19.8, 1.3, 0.6)
    assert held == "4:4:4 9 MP CUDA backend"
    out = run(DATA)
    assert out.returncode == 0, out.stderr
    assert "held by 4:4:4 9 MP CUDA backend" in out.stdout
    assert "call 127: 77.9 ms (engines 15.4, host 77.9)" in out.stdout


def trace_line(call, parts, images):
    """One call in DecodeTrace::Line's format (operators/decoders/decode_trace.cc)."""
    s = "conveyor: decoder trace: call %d: phase A 120 us (route 10, engines' check 90); engines" % call
    for k, (start, end, n) in enumerate(parts):
        s += " [part %d: %d images %d-%d us: wait 5 us; 4:2:0 %d images %dk px %d us;]" % (
            k, n, start, end, n, n * 200, end - start)
    s += ("; images (thread:start-end us [path kpixels subsampling p(rogressive), CUDA parse/wait/host/"
          "issue(transfer) us, allocator calls/us, gpu-huffman]):")
    for t, start, end, kp, sub, prog in images:
        s += " %d:%d-%d[CUDA backend %dk %s%s 40/5/%d/%d(%d)%s]" % (
            t, start, end, kp, sub, " p" if prog else "", (end - start) // 2, (end - start) // 3, 10,
            " gpu-huffman" if kp > 1000 else "")
    return s + "\n"


def test_a_planted_long_photo_is_named_for_its_call_only(tmp_path):
    rng = random.Random()
    calls, planted = 30, rng.randrange(30)
    lines = []
    for c in range(calls):
        engines_end = rng.randint(14000, 16000)  # every other call ends within 15 ± 1 ms
        images, t_end = [], {}
        for _ in range(rng.randint(40, 90)):
            t = rng.randrange(8)
            start = t_end.get(t, 0)
            end = start + rng.randint(200, 2000)
            if end > 14000:
                continue
            t_end[t] = end
            images.append((t, start, end, rng.randint(100, 900), rng.choice(["4:4:4", "4:2:2", "gray"]),
                           rng.random() < 0.2))
        if c == planted:
            images.append((8, 0, rng.randint(50000, 70000), 8500, "4:2:2", True))
        lines.append(trace_line(c, [(20, engines_end, 256 - len(images))], images))
    path = tmp_path / "bench.err"
    path.write_text("some other stderr line\n" + "".join(lines))
    out = run(str(path))
    assert out.returncode == 0, out.stderr
    assert "%d calls" % calls in out.stdout
    held = [line for line in out.stdout.splitlines() if "held by" in line]
    assert held == [held[0]] and "held by 4:2:2 progressive 8 MP CUDA backend" in held[0], out.stdout
    assert " 1 calls" in held[0]
    assert "call %d:" % planted in out.stdout.splitlines()[len(held) + 1]


def test_no_trace_lines_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "empty.err"
    path.write_text("conveyor: bench: 10 iterations\n")
    out = run(str(path))
    assert out.returncode == 1
    assert str(path) in out.stderr and "no decoder trace lines" in out.stderr
