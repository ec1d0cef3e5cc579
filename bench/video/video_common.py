"""Shared by the video benchmark's Python contenders (bench/video/*_video.py): the clip settings every
contender uses, their command-line options, and the figures they print. The timing rule is the
end-to-end suite's (bench/e2e/common.py run_timed: one untimed epoch + warm-up, then timed blocks,
each ending when its last batch is complete on the GPU); here a sample is a clip of
SEQUENCE_LENGTH frames, so images_per_s there is clips/s.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import common  # noqa: E402,F401  (re-exported: the contenders use common.emit, common.skip, ...)

SEQUENCE_LENGTH = 16
STEP = 16      # distance between the first frames of a file's clips (DALI's default: sequence_length)
SIZE = 224     # every frame resized to SIZE x SIZE (aspect ratio not kept, as DALI's resize_x/resize_y)
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".mov", ".webm", ".avi")


def add_args(ap):
    common.add_common_args(ap, iterations=10, repeats=5, warmup=3)
    ap.set_defaults(batch=int(os.environ.get("CONVEYOR_BENCH_BATCH", 8)))
    ap.add_argument("--stride", type=int, default=1, help="distance between a clip's frames")
    ap.add_argument("--codec", default="", help="the data set's codec, for the results (h264, hevc)")


def apply_smoke(args):
    common.apply_smoke(args, batch=4, threads=2, iterations=2, repeats=2, warmup=1)


def video_files(folder):
    """Sorted video paths under folder (recursively); exits saying what it expected when there are none."""
    if not folder or not os.path.isdir(folder):
        sys.exit("expected --data (or $CONVEYOR_BENCH_DATA) to name a folder of videos, got %r" % folder)
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(folder) for f in names
                   if f.lower().endswith(VIDEO_EXTENSIONS))
    if not files:
        sys.exit("expected video files (%s) under %s, found none" % (" ".join(VIDEO_EXTENSIONS), folder))
    return files


def clip_starts(frames, stride, sequence_length=SEQUENCE_LENGTH, step=STEP):
    """First frames of a file's clips: 0, step, ... while the clip's last frame is in the file."""
    span = (sequence_length - 1) * stride + 1
    return list(range(0, max(frames - span + 1, 0), step))


def timed(step, sync, batch, epoch_iterations, args):
    """common.run_timed with the timed window's wall-clock ends (time.time(): the NVDEC sampler's
    clock) as timed_window_epoch, and the figures in clips and frames."""
    figures = common.run_timed(step, sync, batch, epoch_iterations, args, probe=time.time)
    start, end = figures.pop("probe")
    return clip_figures(figures, timed_window_epoch=[round(start, 3), round(end, 3)])


def clip_figures(figures, **extra):
    out = dict(figures)
    for key in ("", "_min", "_max"):
        clips = figures["images_per_s" + key]
        out["clips_per_s" + key] = clips
        out["frames_per_s" + key] = round(clips * SEQUENCE_LENGTH, 1)
    out["repeats_clips_per_s"] = out.pop("repeats_images_per_s")
    for key in ("images_per_s", "images_per_s_min", "images_per_s_max"):
        out.pop(key)
    out.update(sequence_length=SEQUENCE_LENGTH, step=STEP, size=SIZE, **extra)
    return out
