#!/usr/bin/env python3
"""The PyTorch side of the video benchmark (optional peers): torchcodec decoding on the GPU (NVDEC)
when it is installed, else the reason torchvision cannot be the peer, as a skipped row.

    torch_video.py --data DIR [--stride S] [common options]

torchcodec: one VideoDecoder(device="cuda") per file, kept open (as the readers keep theirs);
the clips of every file (starts 0, 16, ... as the readers cut them) in one permutation per epoch
(seed 1234); a batch is 8 clips, each `get_frames_at(start, start + stride, ...)` -> uint8 [F, C, H,
W] on the GPU -> torch.nn.functional.interpolate to 224x224 (bilinear, antialias=True) ->
permuted to FHWC uint8, stacked. No prefetching and one thread: a plain loop, as its tutorials
write it. torchvision 0.26: decoding video went to torchcodec (torchvision.io's video readers are
deprecated), and the pip wheels have no GPU video decoder, so it is never a GPU contender here.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import video_common as vc  # noqa: E402
from video_common import common  # noqa: E402


def why_not_torchvision():
    try:
        import torchvision
        import torchvision.io as tio
    except Exception as e:
        return "torchvision: cannot import (%s)" % e
    gpu = getattr(tio, "_HAS_GPU_VIDEO_DECODER", False)
    return "torchvision %s: %s" % (torchvision.__version__, "has a GPU video decoder, not wired here" if gpu else
                                   "no GPU video decoder in this build (video decoding moved to torchcodec)")


class Clips:
    """The permuted (file, start) clips of the data set, epoch after epoch, decoded batch by batch."""

    def __init__(self, files, stride, torch, decoders):
        self.torch, self.stride, self.decoders = torch, stride, decoders
        self.clips = [(f, s) for f in files for s in vc.clip_starts(decoders[f].metadata.num_frames, stride)]
        if not self.clips:
            raise RuntimeError("no clip of %d frames at stride %d in any file" % (vc.SEQUENCE_LENGTH, stride))
        self.rng = random.Random(1234)
        self.order, self.position = [], 0

    def next_clip(self):
        if self.position >= len(self.order):
            self.order = list(self.clips)
            self.rng.shuffle(self.order)
            self.position = 0
        self.position += 1
        return self.order[self.position - 1]

    def batch(self, n):
        torch = self.torch
        out = []
        for _ in range(n):
            path, start = self.next_clip()
            frames = self.decoders[path].get_frames_at(
                indices=list(range(start, start + vc.SEQUENCE_LENGTH * self.stride, self.stride))).data
            small = torch.nn.functional.interpolate(frames.float(), size=(vc.SIZE, vc.SIZE), mode="bilinear",
                                                    antialias=True, align_corners=False)
            out.append(small.round_().clamp_(0, 255).to(torch.uint8).permute(0, 2, 3, 1))
        return torch.stack(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    vc.add_args(ap)
    args = ap.parse_args()
    vc.apply_smoke(args)
    label = args.label or "torchcodec cuda"
    if args.cpu_smoke:
        return common.skip("torchcodec", "CPU smoke run: the PyTorch peers are GPU rows", label)
    try:
        import torch
        from torchcodec.decoders import VideoDecoder
    except ImportError as e:
        return common.skip("torchcodec", "cannot import torchcodec (%s); %s" % (e, why_not_torchvision()), label)
    files = vc.video_files(args.data)
    try:
        decoders = {f: VideoDecoder(f, device="cuda", seek_mode="exact") for f in files}
        clips = Clips(files, args.stride, torch, decoders)
        clips.batch(1)
    except Exception as e:  # torchcodec present but without CUDA/NVDEC or FFmpeg here
        return common.skip("torchcodec", "torchcodec cannot decode these files on the GPU: %s: %s" %
                           (type(e).__name__, str(e)[:300]), label)
    state = {"out": None}

    def step():
        state["out"] = clips.batch(args.batch)

    figures = vc.timed(step, torch.cuda.synchronize, args.batch, -(-len(clips.clips) // args.batch), args)
    common.emit(dict(figures, contender="torchcodec", label=label, codec=args.codec, stride=args.stride,
                     files=len(files), clips_per_epoch=len(clips.clips), output_shape=list(state["out"].shape),
                     output_dtype=str(state["out"].dtype), versions=common.versions("torch", "torchcodec")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
