#!/usr/bin/env python3
"""Shrinks the FFmpeg part of a GPU bundle's lib/ (tools/gpu_bundle.sh calls it after copying every
library its binaries need): Debian's libavcodec/libavformat/libavutil link ~130 libraries (audio
codecs, subtitles, network protocols, SVG/cairo/ICU, VA-API/VDPAU/X11; ~165 MB, ~52 MB compressed)
of which the video plugin and make_test_videos call none. Each such library becomes a stub: a small
shared object with the same soname, version nodes and exported symbols (functions that abort naming
themselves, zero-filled data), so the FFmpeg libraries load (they are linked with BIND_NOW: every
symbol must resolve at load time), and nothing behind the stub is carried.

    ffmpeg_stubs.py LIBDIR ROOT...     # ROOT: every binary/library of the bundle (ldd's inputs)

Kept real, with their own dependencies: the FFmpeg libraries themselves, the video codec libraries
the tests and benchmarks encode or decode with (KEEP), the compression libraries the demuxers use,
and anything a non-FFmpeg root needs on its own (libcurl's TLS for the readers, libwebp, ...).
Libraries only stubs needed are deleted from LIBDIR. A stubbed function that is ever called prints
"<soname>: <symbol> called, but the GPU bundle carries a stub of this library" and aborts, so a
missing real library can never be mistaken for another failure.
"""
import os
import re
import subprocess
import sys
import tempfile

FFMPEG = re.compile(r"^lib(avcodec|avformat|avutil|avfilter|avdevice|swscale|swresample|postproc)\.so")
# Video codecs (H.264/HEVC encoders, VP9/AV1 for the video tests), the demuxers' decompressors, the
# libraries of demuxers whose probe runs whenever a file is probed (libgme, libopenmpt: probing asks
# every demuxer, and the reader keeps only the answers of the ones it allows), and what is never
# carried (glibc, the C++ runtime: the machine's own).
KEEP = re.compile(r"^(libx264|libx265|libnuma|libvpx|libaom|libdav1d|libz|liblzma|libbz2|libgme|libopenmpt|libc|"
                  r"libm|libmvec|libdl|libpthread|librt|ld-linux.*|libgcc_s|libstdc\+\+)\.so")


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def plan(libdir, roots):
    """(real sonames, stubbed sonames) of the closure from the roots through LIBDIR."""
    real, stubs, seen = set(), set(), set()
    stack = [(r, False) for r in roots]
    while stack:
        obj, via_ffmpeg = stack.pop()
        if (obj, via_ffmpeg) in seen:
            continue
        seen.add((obj, via_ffmpeg))
        path = obj if os.sep in obj else os.path.join(libdir, obj)  # a root's path, or a soname
        if not os.path.exists(path):  # glibc and the C++ runtime: not carried
            continue
        for name in needed(path):
            if FFMPEG.match(name):
                real.add(name)
                stack.append((name, True))
            elif via_ffmpeg and not KEEP.match(name):
                stubs.add(name)
            else:
                real.add(name)
                stack.append((name, via_ffmpeg))
    return real, stubs - real


SYM = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+(\d+|0x[0-9a-f]+)\s+(\w+)\s+(\w+)\s+\w+\s+(\w+)\s+(\S+)")


def exports(path):
    """[(name, version or None, default?, kind, size)] of the library's defined dynamic symbols."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        m = SYM.match(line)
        if not m:
            continue
        size, kind, bind, ndx, name = m.groups()
        if ndx in ("UND", "ABS") or bind not in ("GLOBAL", "WEAK") or kind not in ("FUNC", "IFUNC", "OBJECT", "NOTYPE"):
            continue
        version, default = None, True
        if "@@" in name:
            name, version = name.split("@@", 1)
        elif "@" in name:
            name, version = name.split("@", 1)
            default = False
        syms.append((name, version, default, "OBJECT" if kind == "OBJECT" else "FUNC", int(size, 0)))
    return syms


def version_nodes(path, soname):
    out = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True).stdout
    names = re.findall(r"Flags: (?:none|WEAK)\s+Index: \d+\s+Cnt: \d+\s+Name: (\S+)", out)
    return [n for n in names if n != soname]


def stub_sources(soname, syms, nodes):
    """(C source, version script) of the stub."""
    c = ["/* Stub of %s (tools/ffmpeg_stubs.py): loads, never works. */" % soname,
         "#include <stdio.h>", "#include <stdlib.h>",
         "__attribute__((visibility(\"hidden\"), noreturn)) static void stub_called(const char* s) {",
         "  fprintf(stderr, \"%s: %%s called, but the GPU bundle carries a stub of this library\\n\", s);" % soname,
         "  abort();", "}"]
    by_node = {n: [] for n in nodes}
    plain = []
    for i, (name, version, default, kind, size) in enumerate(syms):
        internal = "conveyor_stub_%d" % i
        exported = name if default else internal
        if kind == "OBJECT":
            c.append('char %s[%d] __asm__("%s");' % (internal, max(size, 1), exported))
            c.append('char %s[%d] = {0};' % (internal, max(size, 1)))
        else:
            c.append('void %s(void) __asm__("%s");' % (internal, exported))
            c.append('void %s(void) { stub_called("%s"); }' % (internal, name))
        if not default:
            c.append('__asm__(".symver %s, %s@%s");' % (internal, name, version))
        elif version and version != soname:
            by_node.setdefault(version, []).append(name)
        else:
            plain.append(name)
    if not by_node:
        return "\n".join(c) + "\n", "{ global: %s local: *; };\n" % "".join("%s; " % n for n in plain)
    # ld takes no anonymous node beside named ones: unversioned symbols join the first node (an
    # unversioned reference binds to a symbol's default version all the same).
    script = []
    for i, (node, names) in enumerate(by_node.items()):
        listed = names + (plain if i == 0 else [])
        body = ("global: %s" % "".join("%s; " % n for n in listed) if listed else "") + ("local: *;" if i == 0 else "")
        script.append("%s { %s };" % (node, body))
    return "\n".join(c) + "\n", "\n".join(script) + "\n"


def make_stub(real_path, soname, out_path, work):
    syms = exports(real_path)
    src, script = stub_sources(soname, syms, version_nodes(real_path, soname))
    base = os.path.join(work, soname)
    with open(base + ".c", "w") as f:
        f.write(src)
    with open(base + ".map", "w") as f:
        f.write(script)
    cmd = ["gcc", "-shared", "-fPIC", "-O1", "-w", "-o", out_path, base + ".c", "-Wl,-soname," + soname,
           "-Wl,--version-script=" + base + ".map", "-Wl,--no-undefined", "-s"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("stub of %s: gcc failed: %s" % (soname, r.stderr[-2000:]))
    return len(syms)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: ffmpeg_stubs.py LIBDIR ROOT...")
    libdir, roots = sys.argv[1], sys.argv[2:]
    real, stubs = plan(libdir, roots)
    if not any(FFMPEG.match(n) for n in real):
        print("ffmpeg_stubs: no FFmpeg library among the roots' dependencies; nothing to do")
        return 0
    before = sum(os.path.getsize(os.path.join(libdir, f)) for f in os.listdir(libdir))
    with tempfile.TemporaryDirectory() as work:
        for soname in sorted(stubs):
            path = os.path.join(libdir, soname)
            if not os.path.exists(path):
                continue
            tmp = os.path.join(work, soname + ".stub")
            make_stub(path, soname, tmp, work)
            os.replace(tmp, path)
    removed = [f for f in os.listdir(libdir) if f not in real and f not in stubs]
    for f in removed:
        os.remove(os.path.join(libdir, f))
    after = sum(os.path.getsize(os.path.join(libdir, f)) for f in os.listdir(libdir))
    print("ffmpeg_stubs: %d libraries stubbed, %d only they needed removed; lib/ %.0f MB -> %.0f MB" %
          (len(stubs), len(removed), before / 1e6, after / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
