"""A PyTorch training loop as users write it, for the pytorch suite (tests/pytorch).

The dataset is slow on purpose: its collate function sleeps --collate-ms per batch, the way
decoding or augmenting on the CPU takes time. --loader starved loads in the training process
(num_workers=0), so the GPU waits for every batch; --loader fed loads in --workers forked
DataLoader workers into pinned memory (pin_memory=True) and copies with non_blocking=True, so
batches are ready before the step needs them. --model mlp (cuBLAS matmuls) or conv (cuDNN
convolutions, then a linear layer). Prints one line per step with values computed on the CPU
from the batch alone, so the output does not depend on GPU results (the simulated GPU does not
run cuBLAS's or cuDNN's kernels), then the tensors' devices and counts; stderr says which
processes loaded batches and how long the host took between steps.
"""
import argparse
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.dataloader import default_collate

ap = argparse.ArgumentParser()
ap.add_argument("--loader", choices=["starved", "fed"], required=True)
ap.add_argument("--model", choices=["mlp", "conv"], default="mlp")
ap.add_argument("--steps", type=int, default=8)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--collate-ms", type=float, default=25.0)
ap.add_argument("--workers", type=int, default=2)
# the host away this long between a step's two copies (x, then y): a host descheduled there
ap.add_argument("--label-pause-ms", type=float, default=0.0)
args = ap.parse_args()

assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
dev = torch.device("cuda")
FEATURES, CLASSES = 256, 10


class SlowDataset(Dataset):
    """Deterministic samples: sample i is filled from a generator seeded with i."""

    def __len__(self):
        return args.steps * args.batch

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        shape = (3, 16, 16) if args.model == "conv" else (FEATURES,)
        return torch.randn(shape, generator=g), i % CLASSES


def slow_collate(items):
    time.sleep(args.collate_ms / 1000.0)
    if torch.utils.data.get_worker_info() is not None:
        print("loader worker pid %d" % os.getpid(), file=sys.stderr)
    return default_collate(items)


if args.model == "mlp":
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, 512), torch.nn.GELU(), torch.nn.Linear(512, CLASSES))
else:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, CLASSES))
model = model.to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
assert all(p.is_cuda for p in model.parameters())

fed = args.loader == "fed"
loader = DataLoader(SlowDataset(), batch_size=args.batch, shuffle=False, collate_fn=slow_collate,
                    num_workers=args.workers if fed else 0, pin_memory=fed,
                    prefetch_factor=4 if fed else None, persistent_workers=False)
# Backward runs on this thread, not on autograd's device thread: that thread often frees each
# step's autograd task just after backward() returns, taking the GIL to drop the Python context
# the task holds; this loop ends right after its last step, and when that falls inside Python's
# finalization CPython ends the thread inside a C++ destructor and the process aborts ("terminate
# called without an active exception", pytorch/pytorch#117762), whatever the driver (README;
# autograd_exit.py keeps the thread, ending as the examples do).
torch.autograd.set_multithreading_enabled(False)
steps = 0
# stderr: how long the host went from the end of each step's calls to the next batch's copy
# and to that copy's return (CLOCK_MONOTONIC ns): the GPU's idle time between steps, when the
# loader starves it, lies between the two (give or take the GPU's tail of the step); and how
# long the step took it from the batch's copy to the end of its calls (the loop's step between
# batches, as the main thread lives it)
step_done = None


def runq_ns():
    """The main thread's time waiting on a run queue (schedstat's second field): a host
    descheduled, which neither the trace's calls nor its CPU times show."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


for x, y in loader:
    if fed:
        assert x.is_pinned() and y.is_pinned(), "pin_memory=True gave pageable batches"
    checksum = float(x.double().sum())
    rq_copy = runq_ns()
    to_copy = time.monotonic_ns()
    x = x.to(dev, non_blocking=fed)  # cutrace: batch-copy
    copied = time.monotonic_ns()
    rq_pause = runq_ns()
    if args.label_pause_ms:
        time.sleep(args.label_pause_ms / 1000.0)
    paused = time.monotonic_ns() - copied
    rq_pause = runq_ns() - rq_pause
    y = y.to(dev, non_blocking=fed)
    assert x.is_cuda and y.is_cuda
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step_done is not None:  # after the step's calls: not in the time it measures
        print("host between steps ns %d" % (to_copy - step_done), file=sys.stderr)
        print("host to the batch copy's return ns %d" % (copied - step_done), file=sys.stderr)
    step_done = time.monotonic_ns()
    print("host in the step ns %d" % (step_done - to_copy), file=sys.stderr)
    print("host in the step outside the pause ns %d" % (step_done - to_copy - paused), file=sys.stderr)
    # ... less the time it waited for a CPU there (a descheduled host leaves the GPU idle in
    # what the trace can only take for loading)
    print("host in the step outside the pause and the run queue ns %d"
          % (step_done - to_copy - paused - (runq_ns() - rq_copy - rq_pause)), file=sys.stderr)
    assert out.is_cuda and loss.is_cuda
    print("step %d batch %d checksum %.6f" % (steps, x.shape[0], checksum))
    steps += 1
torch.cuda.synchronize()  # cutrace: final-sync
print("steps %d model %s loader %s device %s" % (steps, args.model, args.loader, out.device))
sys.stdout.flush()
