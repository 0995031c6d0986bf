"""noloader: a PyTorch loop with no DataLoader (issue 28), as language models and RNN examples
write them: each step builds its small input on the host in Python (24 floats, made into a
tensor and copied to the GPU: 96 bytes), runs a small model and reads the loss with .item(), a
synchronization hidden in the line that reads it.

    noloader.py [steps]

stdout: "noloader: steps N build_ns B" with B the host's time building inputs (its own clock),
then the loss. What an expert concludes: the GPU waits for the host's own Python (build), not
for a data loader; the .item() synchronization costs at most the time it blocks."""
import sys
import time

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
dev = torch.device("cuda")
# Backward on this thread, not autograd's: this loop ends right after its last step
# (autograd_exit.py, README: PyTorch's race at interpreter exit).
torch.autograd.set_multithreading_enabled(False)
model = torch.nn.Sequential(torch.nn.Linear(24, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)


def build(step):
    # 40 ms of the host's own work, in Python
    end = time.monotonic_ns() + 40000000
    xs, k = [], step
    while time.monotonic_ns() < end or len(xs) < 24:
        k = (k * 1103515245 + 12345) % 2147483648
        xs = (xs + [k / 2147483648.0])[-24:]  # cutrace: build
    return xs


total, built = 0.0, 0
for step in range(STEPS):
    t0 = time.monotonic_ns()
    xs = build(step)
    built += time.monotonic_ns() - t0
    x = torch.tensor(xs, device="cpu").to(dev)
    loss = model(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss.item()  # cutrace: item
print("noloader: steps %d build_ns %d" % (STEPS, built))
print("noloader: loss %.3f" % total)
