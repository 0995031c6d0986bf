"""A PyTorch loop that spends known phases in known functions, 20 Python frames down, each
timed on its own clock, for the thread sampler (issue 28, item 2): each round, prepare() builds
a batch in Python (a busy loop on the line marked `# cutrace: prepare`), step() multiplies on
the GPU and synchronizes (torch.cuda.synchronize, marker step) and wait() sleeps (marker wait).
stdout: per phase "phases: phase NAME START END" (CLOCK_MONOTONIC ns, the trace's clock), then
"phases: rounds=N"."""
import argparse
import time

import torch

clock = time.monotonic_ns


def prepare(ms):
    end, batch = clock() + ms * 1000000, []
    while clock() < end: batch.append(len(batch) % 7)  # noqa: E701  # cutrace: prepare
    return batch


def step(x, w, ms):
    end = clock() + ms * 1000000
    while clock() < end:
        y = x @ w
        torch.cuda.synchronize()  # cutrace: step
    return y


def wait(ms):
    time.sleep(ms / 1000)  # cutrace: wait


def phase(name, fn, *args):
    t0 = clock()
    fn(*args)
    print("phases: phase %s %d %d" % (name, t0, clock()))


def deep(n, fn):
    return deep(n - 1, fn) if n > 0 else fn()


ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()
x = torch.ones(256, 256, device="cuda")
w = torch.ones(256, 256, device="cuda")
torch.cuda.synchronize()


def one_round():
    phase("prepare", prepare, 150)
    phase("step", step, x, w, 100)
    phase("wait", wait, 100)


for _ in range(args.rounds):
    deep(20, one_round)
print("phases: rounds=%d" % args.rounds)
