#!/usr/bin/env python3
"""PyTorch peers of tests/benchmarks/tensor_bench (issue 38): the same work on the same shapes, batch
256, CUDA tensors, eager and torch.compile; one JSON line per (op, peer) with one-launch and
back-to-back ms (peer_timing.py, as the C++ benchmarks time).

| op              | work                                                                          |
|-----------------|-------------------------------------------------------------------------------|
| cat_width       | two [256, 224, 112, 3] uint8 halves -> torch.cat(dim=2) -> [256, 224, 224, 3]  |
| lookup_table_u8 | [256, 224, 224, 3] uint8 keys -> table[keys] with a 256-entry uint8 table      |
| one_hot_u8_4    | [256, 224, 224] uint8 class map -> one_hot(4) as uint8, class axis last        |
"""
import json
import sys

from peer_timing import time_ms


def main():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(json.dumps({"error": "needs torch: %s" % e}))
        return 0
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(11)
    halves = [torch.randint(0, 7, (256, 224, 112, 3), dtype=torch.uint8, device=dev, generator=g) for _ in range(2)]
    keys = torch.randint(0, 256, (256, 224, 224, 3), dtype=torch.uint8, device=dev, generator=g)
    table = (255 - torch.arange(256, device=dev)).to(torch.uint8)
    classes = torch.randint(0, 4, (256, 224, 224), dtype=torch.uint8, device=dev, generator=g)

    work = {
        "cat_width": lambda: torch.cat(halves, dim=2),
        "lookup_table_u8": lambda: table[keys.long()],
        "one_hot_u8_4": lambda: F.one_hot(classes.long(), 4).to(torch.uint8),
    }
    for name, fn in work.items():
        for peer, f in (("torch eager", fn), ("torch.compile", torch.compile(fn))):
            try:
                f()
                torch.cuda.synchronize()
                one, b2b = time_ms(f, 30)
                print(json.dumps({"op": name, "peer": peer, "ms": one, "b2b_ms": b2b}))
            except Exception as e:  # a peer that cannot run says why; the others go on
                print(json.dumps({"op": name, "peer": peer, "error": str(e)[:300]}))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
