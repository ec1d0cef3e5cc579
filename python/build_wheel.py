"""Builds dist/conveyor-<version>-py3-none-linux_x86_64.whl with the standard library only.

    python3 python/build_wheel.py --lib bazel-bin/core/capi/libconveyor_c.so [--out dist]
        [--plugin bazel-bin/operators/video/libconveyor_video.so]
    (tools/build_wheel.sh builds the library and the video plugin first and calls this)

The wheel holds the conveyor package, libconveyor_c.so and every shared library it needs that is
not part of the C/C++ runtime every Linux has (glibc, libstdc++, libgcc_s): TBB, yaml-cpp,
libjpeg-turbo, libpng, zlib, ... as `ldd` resolves them here. They sit beside libconveyor_c.so,
whose DT_RPATH is $ORIGIN (core/capi/BUILD), so the installed package needs no LD_LIBRARY_PATH.
The package is pure ctypes, so one wheel serves every CPython 3 (tag py3-none-linux_x86_64).

--plugin packs an on-demand plugin (libconveyor_video.so: readers.video, decoders.video) beside
libconveyor_c.so, where the loader looks for it (core/op/plugin.h), WITHOUT its own libraries:
FFmpeg's ~160 MB stay the system's (Debian: libavformat59 libavcodec59 libswscale6). Where they are
missing, a pipeline naming a video operator fails saying which packages to install; nothing else
needs them.
"""
import argparse
import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The C and C++ runtimes: the target machine's own copies are used (newer there, backward compatible).
SYSTEM_LIBS = re.compile(r"^(libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s|ld-linux.*)"
                         r"\.so(\.|$)")


def version():
    text = open(os.path.join(HERE, "conveyor", "_version.py")).read()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def needed_libraries(lib):
    """(soname, path) of each library `ldd lib` resolves, minus the C/C++ runtime."""
    out = subprocess.run(["ldd", lib], check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if not m:
            continue
        soname, path = m.groups()
        if path == "not":
            raise SystemExit("build_wheel: %s needs %s, which ldd cannot find here" % (lib, soname))
        if not SYSTEM_LIBS.match(soname):
            found.append((soname, path))
    return found


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def strip(data, name, tmp):
    """The library without debug sections (a quarter of the size), or as it is without `strip`."""
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    if subprocess.run(["strip", "--strip-debug", path], capture_output=True).returncode == 0:
        with open(path, "rb") as f:
            data = f.read()
    os.remove(path)
    return data


def build(lib, out_dir, plugins=()):
    ver = version()
    files = []  # (name in the wheel, bytes, executable)
    package = os.path.join(HERE, "conveyor")
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), "rb") as f:
                files.append(("conveyor/" + name, f.read()))
    os.makedirs(out_dir, exist_ok=True)
    for soname, path in [("libconveyor_c.so", lib)] + needed_libraries(lib):
        with open(path, "rb") as f:  # follows symlinks: the file under its soname
            files.append(("conveyor/" + soname, strip(f.read(), soname, out_dir)))
    for plugin in plugins:  # its own dependencies are the system's (the docstring)
        name = os.path.basename(plugin)
        with open(plugin, "rb") as f:
            files.append(("conveyor/" + name, strip(f.read(), name, out_dir)))

    dist_info = "conveyor-%s.dist-info" % ver
    metadata = ("Metadata-Version: 2.1\nName: conveyor\nVersion: %s\n"
                "Summary: GPU data pipelines in the style of NVIDIA DALI (ctypes bridge, PyTorch loader)\n"
                "Requires-Python: >=3.9\n" % ver)
    wheel = ("Wheel-Version: 1.0\nGenerator: conveyor python/build_wheel.py\nRoot-Is-Purelib: false\n"
             "Tag: py3-none-linux_x86_64\n")
    files.append((dist_info + "/METADATA", metadata.encode()))
    files.append((dist_info + "/WHEEL", wheel.encode()))
    files.append((dist_info + "/top_level.txt", b"conveyor\n"))
    record = "".join(record_line(n, d) + "\n" for n, d in files) + dist_info + "/RECORD,,\n"

    path = os.path.join(out_dir, "conveyor-%s-py3-none-linux_x86_64.whl" % ver)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for name, data in files + [(dist_info + "/RECORD", record.encode())]:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))  # reproducible
            info.external_attr = (0o755 if name.endswith(".so") or ".so." in name else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="libconveyor_c.so to package")
    parser.add_argument("--out", default="dist", help="output folder (default: dist)")
    parser.add_argument("--plugin", action="append", default=[],
                        help="an on-demand plugin packed beside libconveyor_c.so, without its own libraries")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.lib):
        raise SystemExit("build_wheel: expected libconveyor_c.so at %s, found nothing there (bazel build "
                         "//core/capi:libconveyor_c.so)" % args.lib)
    for plugin in args.plugin:
        if not os.path.isfile(plugin) or not os.path.basename(plugin).endswith(".so"):
            raise SystemExit("build_wheel: --plugin: expected a plugin .so file, found nothing at %s (bazel build "
                             "//operators/video:libconveyor_video.so)" % plugin)
    path = build(args.lib, args.out, args.plugin)
    with zipfile.ZipFile(path) as whl:
        libs = [n for n in whl.namelist() if ".so" in n]
    print("%s (%.1f MiB): %s" % (path, os.path.getsize(path) / 2**20, ", ".join(os.path.basename(n) for n in libs)))


if __name__ == "__main__":
    sys.exit(main())
