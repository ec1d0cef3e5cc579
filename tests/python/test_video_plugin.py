"""The video operators through the Python package: libconveyor_c.so loads libconveyor_video.so on
demand from its own folder (core/op/plugin.h) — where the wheel puts it (python/build_wheel.py
--plugin, without FFmpeg's libraries, which are the system's). Skips where the plugin was not built
beside the library under test (bazel-bin/operators/video/libconveyor_video.so)."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

try:
    import conveyor
except ImportError as e:
    pytest.skip("conveyor not importable: %s" % e, allow_module_level=True)

BUILD_WHEEL = os.path.join(os.path.dirname(os.path.abspath(conveyor.__file__)), "..", "build_wheel.py")

YAML = """pipeline: {name: video_plugin, batch_size: 1, device: cpu}
ops:
  - {op: external_source, name: src, outputs: [encoded]}
  - {op: decoders.video, name: dec, inputs: [encoded], args: {sequence_length: 2}, outputs: [clips]}
outputs: [clips]
"""


def video_plugin():
    """bazel-bin/operators/video/libconveyor_video.so beside bazel-bin/core/capi/libconveyor_c.so."""
    bin_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(conveyor.library_path))))
    path = os.path.join(bin_dir, "operators", "video", "libconveyor_video.so")
    if not os.path.isfile(path):
        pytest.skip("no libconveyor_video.so at %s (bazel build //operators/video:libconveyor_video.so)" % path)
    return path


def make_pipeline(folder):
    """A python3 that makes a pipeline naming decoders.video with the library copied into `folder`."""
    env = {k: v for k, v in os.environ.items() if k != "CONVEYOR_PLUGIN_PATH"}
    env["CONVEYOR_LIB"] = os.path.join(folder, "libconveyor_c.so")
    code = "import conveyor; conveyor.Pipeline(%r); print('made')" % YAML
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=folder)


def test_video_operators_load_from_the_library_folder(tmp_path):
    plugin = video_plugin()
    shutil.copy(conveyor.library_path, str(tmp_path / "libconveyor_c.so"))
    missing = make_pipeline(str(tmp_path))
    assert missing.returncode != 0
    assert "libconveyor_video.so" in missing.stderr and str(tmp_path) in missing.stderr, missing.stderr
    shutil.copy(plugin, str(tmp_path / "libconveyor_video.so"))
    found = make_pipeline(str(tmp_path))
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "made"


def test_the_wheel_carries_the_plugin_without_ffmpeg(tmp_path):
    plugin = video_plugin()
    done = subprocess.run([sys.executable, BUILD_WHEEL, "--lib", conveyor.library_path, "--plugin", plugin,
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (wheel,) = [os.path.join(str(tmp_path), n) for n in os.listdir(str(tmp_path)) if n.endswith(".whl")]
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
    assert "conveyor/libconveyor_video.so" in names
    assert not any(n.startswith(("conveyor/libavformat", "conveyor/libavcodec", "conveyor/libswscale"))
                   for n in names), names


def test_a_missing_plugin_file_is_named(tmp_path):
    nothing = str(tmp_path / "libconveyor_video.so")
    done = subprocess.run([sys.executable, BUILD_WHEEL, "--lib", conveyor.library_path, "--plugin", nothing,
                           "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "--plugin: expected a plugin .so file, found nothing at %s" % nothing in done.stderr
