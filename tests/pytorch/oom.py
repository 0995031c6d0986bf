"""PyTorch running out of GPU memory, as a too-large batch does: a few tensors held by the caching
allocator, then one allocation larger than the device (--request-gib), caught as
torch.cuda.OutOfMemoryError; the program goes on and exits normally. For the pytorch suite
(tests/pytorch): stdout is the same traced or not; stderr lists the caching allocator's
segments (torch.cuda.memory_snapshot(): `segment ADDRESS BYTES`), what the trace must show.
"""
import argparse
import sys

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--request-gib", type=int, default=10240)
args = ap.parse_args()

assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
dev = torch.device("cuda")
# a small tensor (the small pool's 2 MiB segments), a medium one (20 MiB segments) and a large
# one (its own segment, rounded to 2 MiB)
held = [torch.ones(1000, device=dev), torch.ones(3 << 20, dtype=torch.uint8, device=dev),  # cutrace: held
        torch.ones(33 << 20, dtype=torch.uint8, device=dev)]  # cutrace: held-large
assert all(t.is_cuda for t in held)
print("held %d tensors, %d elements" % (len(held), sum(t.numel() for t in held)))
for seg in torch.cuda.memory_snapshot():
    print("segment %d %d" % (seg["address"], seg["total_size"]), file=sys.stderr)
try:
    big = torch.empty(args.request_gib << 30, dtype=torch.uint8, device=dev)
    print("allocated %d GiB: no out-of-memory error" % args.request_gib)
    sys.exit(1)
except torch.cuda.OutOfMemoryError as e:
    print("caught torch.cuda.OutOfMemoryError for %d GiB" % args.request_gib)
    print("oom message: %s" % str(e).splitlines()[0][:60], file=sys.stderr)
del held
torch.cuda.synchronize()
print("done")
