"""A PyTorch training loop that names its phases with NVTX, for the pytorch suite (tests/pytorch).

Each of --steps steps is pushed as "train_step" (torch.cuda.nvtx.range_push/range_pop) around
loading its batch in a "data_load" range (torch.cuda.nvtx.range, a context manager) and the
step itself. The last --emit-steps steps run under torch.autograd.profiler.emit_nvtx(), which
pushes a range per operator ("aten::add, seq = 123", the autograd sequence number): there the
step also chains --chain additions with a tensor that requires gradients, each a new sequence
number, so the operator names outnumber what a trace keeps (1,024 distinct names per file).
Prints what the script did and values computed on the CPU from the batches alone, so the output
does not depend on GPU results (the simulated GPU does not run cuBLAS's kernels) nor on tracing.
"""
import argparse
import sys

import torch

ap = argparse.ArgumentParser()
for flag, default in (("--steps", 6), ("--emit-steps", 2), ("--chain", 700)):
    ap.add_argument(flag, type=int, default=default)
args = ap.parse_args()

assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
dev = torch.device("cuda")
FEATURES, CLASSES, BATCH = 64, 10, 8
model = torch.nn.Sequential(
    torch.nn.Linear(FEATURES, 128), torch.nn.ReLU(), torch.nn.Linear(128, CLASSES)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
bias = torch.zeros(CLASSES, device=dev, requires_grad=True)
# backward on this thread: PyTorch's autograd device thread can abort the process when the last
# backward() is this close to the interpreter's exit (train.py says how)
torch.autograd.set_multithreading_enabled(False)


def step(i, chain):
    with torch.cuda.nvtx.range("data_load"):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(BATCH, FEATURES, generator=g)
        y = torch.arange(BATCH) % CLASSES
        checksum = float(x.double().sum())
        x, y = x.to(dev), y.to(dev)
    out = model(x)
    for _ in range(chain):
        out = out + bias
    loss = torch.nn.functional.cross_entropy(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return checksum


pushes = 0
for i in range(args.steps):
    emitted = i >= args.steps - args.emit_steps
    torch.cuda.nvtx.range_push("train_step")
    pushes += 1
    if emitted:
        with torch.autograd.profiler.emit_nvtx():
            checksum = step(i, args.chain)
    else:
        checksum = step(i, 0)
    torch.cuda.nvtx.range_pop()
    print("step %d emitted %d checksum %.6f" % (i, emitted, checksum))
torch.cuda.synchronize()
print("train_step pushes %d data_load ranges %d chained additions %d"
      % (pushes, args.steps, args.emit_steps * args.chain))
sys.stdout.flush()
