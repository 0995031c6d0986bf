"""A training loop that leaves backward on autograd's own device thread, for the pytorch suite.

PyTorch runs the backward pass of CUDA tensors on a detached thread of its own ("pt_autograd_0"),
which calls the runtime and the driver (cudaSetDevice, launches) and lives until the process
exits. The suite's other programs run backward on the main thread instead (train.py says why);
this one keeps PyTorch's default and ends as pytorch/examples' mnist does, with an evaluation
pass after training (--eval batches under no_grad, each read back with .item()). Prints values
computed on the CPU from the batches alone, so the output does not depend on GPU results.
"""
import argparse

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=4)
ap.add_argument("--eval", type=int, default=8)
args = ap.parse_args()

assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
assert torch.autograd.is_multithreading_enabled(), "autograd's device thread is off"
# mnist's shapes: a convolution (cuDNN, its backward on autograd's thread) and a linear layer
CLASSES, BATCH = 10, 16
net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                          torch.nn.Linear(4 * 26 * 26, CLASSES))
dev = torch.device("cuda")
model = net.to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def batch(i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(BATCH, 1, 28, 28, generator=g)
    return x, torch.arange(BATCH) % CLASSES, float(x.double().sum())


for step in range(args.steps):
    x, y, checksum = batch(step)
    loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print("step %d checksum %.6f" % (step, checksum))
with torch.no_grad():
    for i in range(args.eval):
        x, y, checksum = batch(1000 + i)
        model(x.to(dev)).sum().item()
        print("eval %d checksum %.6f" % (i, checksum))
print("steps %d eval %d" % (args.steps, args.eval))
