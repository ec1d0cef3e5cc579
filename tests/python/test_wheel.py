"""The wheel: python/build_wheel.py packs the library under test; pip installs it into a fresh venv
(--no-index, nothing downloaded) where, with no CONVEYOR_LIB, PYTHONPATH or LD_LIBRARY_PATH, the
package imports, reports its version, loads TBB / yaml-cpp from its own folder and runs a pipeline.
Skips with the reason where venv or pip is missing."""
import base64
import hashlib
import os
import subprocess
import sys
import zipfile

import pytest

try:
    import conveyor
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

BUILD_WHEEL = os.path.join(os.path.dirname(os.path.abspath(conveyor.__file__)), "..", "build_wheel.py")

CHECK = r"""
import os, sys, conveyor
import numpy as np
print("version", conveyor.__version__)
print("package", os.path.dirname(os.path.abspath(conveyor.__file__)))
print("library", conveyor.library_path)
pipe = conveyor.Pipeline('''pipeline: {name: wheel, batch_size: 2, device: cpu, num_threads: 1, prefetch_depth: 2}
ops:
  - {op: random.uniform, name: u, args: {range: [0.0, 1.0], shape: [3]}, outputs: [u]}
outputs: [u]
''')
u = np.from_dlpack(next(iter(pipe))["u"])
print("batch", u.shape, bool(((u >= 0) & (u < 1)).all()))
for line in open("/proc/self/maps"):
    if "libtbb" in line or "libyaml-cpp" in line:
        print("mapped", line.split()[-1])
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, BUILD_WHEEL, "--lib", conveyor.library_path, "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (path,) = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".whl")]
    return path


def test_wheel_is_named_tagged_and_recorded(wheel):
    assert os.path.basename(wheel) == "conveyor-%s-py3-none-linux_x86_64.whl" % conveyor.__version__
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        info = "conveyor-%s.dist-info/" % conveyor.__version__
        assert "Tag: py3-none-linux_x86_64" in whl.read(info + "WHEEL").decode()
        for required in ("conveyor/__init__.py", "conveyor/torch.py", "conveyor/libconveyor_c.so",
                         "conveyor/libtbb.so.12", info + "METADATA", info + "RECORD"):
            assert required in names
        assert not any(n.startswith(("conveyor/libc.so", "conveyor/libstdc++", "conveyor/libgcc_s")) for n in names)
        rows = [r.split(",") for r in whl.read(info + "RECORD").decode().splitlines()]
        assert sorted(r[0] for r in rows) == sorted(names)
        for name, digest, size in rows:
            if name == info + "RECORD":
                assert digest == size == ""
                continue
            data = whl.read(name)
            assert int(size) == len(data)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_wheel_installs_into_a_fresh_venv_and_runs_without_library_paths(wheel, tmp_path):
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip("python3 -m venv is unavailable: " + made.stderr.strip())
    python = str(venv / "bin" / "python")
    if subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode != 0:
        # A python3 that is itself a venv (the GPU machine's) passes no site-packages on to a new
        # venv, and nothing can be installed there without a network.
        pytest.skip("the fresh venv sees no NumPy (this python3 is itself a venv)")
    env = {k: v for k, v in os.environ.items() if k not in ("CONVEYOR_LIB", "PYTHONPATH", "LD_LIBRARY_PATH")}
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index", "--no-deps",
                          "--disable-pip-version-check", wheel], capture_output=True, text=True, env=env)
    if pip.returncode != 0 and "no such option: --python" in pip.stderr:
        pytest.skip("pip here is older than 22.3 (no --python)")
    assert pip.returncode == 0, pip.stdout + pip.stderr
    run = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines() if not line.startswith("mapped"))
    assert lines["version"] == conveyor.__version__
    package = lines["package"]
    assert package.startswith(str(venv)), "imported the installed package, not the source tree"
    assert lines["library"] == os.path.join(package, "libconveyor_c.so")
    assert lines["batch"] == "(2, 3) True"
    mapped = [line.split(" ", 1)[1] for line in run.stdout.splitlines() if line.startswith("mapped")]
    assert mapped and all(m.startswith(package) for m in mapped), "TBB and yaml-cpp come from the wheel: %s" % mapped
