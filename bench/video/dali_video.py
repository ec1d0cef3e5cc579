#!/usr/bin/env python3
"""NVIDIA DALI 2.4, the video peer (issue 39): clips decoded on NVDEC and resized to 224x224 per
frame on the GPU, uint8 FHWC, timed by the end-to-end suite's rule (video_common.py). DALI comes from
PYTHONPATH (tools/stage_dali.sh installs it into /root/dali_site on the GPU machine); without it, or
without a GPU, the row is reported as skipped with the reason.

    dali_video.py --reader legacy|experimental --data DIR [--stride S] [--reader-prefetch N] [common options]

| --reader     | DALI operator                                                                      |
|--------------|------------------------------------------------------------------------------------|
| legacy       | fn.readers.video(device="gpu"): the operator the issue names (NVDEC, FFmpeg demux) |
| experimental | fn.experimental.readers.video(device="gpu"): DALI's newer reader (the same NVDEC)  |

Both: file_root DIR (one class folder, as Conveyor's reader gets), sequence_length 16, stride S,
step 16, random_shuffle True, seed 1234, then fn.resize(device="gpu", resize_x=224, resize_y=224)
(DALI's defaults: linear, antialias; uint8 stays uint8). The settings chosen for DALI, from its
documentation: the pipeline's num_threads and prefetch_queue_depth as Conveyor's (--threads,
--prefetch); the reader's own prefetch_queue_depth (batches its loader decodes ahead, default 1,
"increase when the reader is data bound") --reader-prefetch, default 2; initial_fill (the shuffle
buffer) left at 1024, more than the clips of a data set here, so the order is a full shuffle;
additional_decode_surfaces left at 2; file_list_include_preceding_frame and the other file_list
options do not apply (file_root). DALI's legacy reader documents constant frame rate files only:
the benchmark's files are.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import video_common as vc  # noqa: E402
from video_common import common  # noqa: E402


def build(args, fn, pipeline_def):
    reader = fn.readers.video if args.reader == "legacy" else fn.experimental.readers.video

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=0, seed=1234,
                  prefetch_queue_depth=args.prefetch)
    def video():
        out = reader(device="gpu", file_root=args.data, sequence_length=vc.SEQUENCE_LENGTH, stride=args.stride,
                     step=vc.STEP, random_shuffle=True, prefetch_queue_depth=args.reader_prefetch, name="reader")
        clips = out[0] if isinstance(out, (list, tuple)) else out
        return fn.resize(clips, device="gpu", resize_x=vc.SIZE, resize_y=vc.SIZE)

    return video()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    vc.add_args(ap)
    ap.add_argument("--reader", choices=["legacy", "experimental"], default="legacy")
    ap.add_argument("--reader-prefetch", type=int, default=2, help="the reader's prefetch_queue_depth")
    args = ap.parse_args()
    vc.apply_smoke(args)
    label = args.label or "dali %s readers.video" % args.reader
    if args.cpu_smoke:
        return common.skip("dali", "CPU smoke run: DALI's readers.video decodes on the GPU only", label)
    try:
        from nvidia.dali import fn, pipeline_def
    except ImportError as e:
        return common.skip("dali", "cannot import nvidia.dali (stage it with tools/stage_dali.sh and put its "
                           "folder on PYTHONPATH): %s" % e, label)
    files = vc.video_files(args.data)
    pipe = build(args, fn, pipeline_def)
    pipe.build()
    clips = pipe.epoch_size("reader")
    state = {"out": None}

    def step():
        state["out"] = pipe.run()

    def sync():
        state["out"][0].as_cpu()  # a copy to the host waits for the iteration's GPU work

    figures = vc.timed(step, sync, args.batch, -(-clips // args.batch), args)
    first = state["out"][0].as_cpu()
    shape = [len(first)] + list(first[0].shape())
    common.emit(dict(figures, contender="dali", label=label, reader=args.reader, codec=args.codec,
                     stride=args.stride, files=len(files), clips_per_epoch=clips, threads=args.threads,
                     prefetch=args.prefetch, reader_prefetch=args.reader_prefetch, initial_fill=1024,
                     output_shape=shape, output_dtype=str(first.dtype), output_layout=str(first.layout()),
                     versions=common.versions("nvidia.dali")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
