"""A PyTorch loop whose copies and synchronizations are made on lines marked `# cutrace: <what>`,
for the advice that names the user's line (issue 14 item 3): each step copies a pageable CPU
batch with .cuda() (marker cuda-copy), reads the loss with .item() (marker item), which waits
for the GPU, and formats it (marker format: Tensor.__format__ reads it the same way); a Linear layer is moved with Module.cuda() (marker module-cuda: PyTorch's Python
code calls .cuda() on its parameters, not the user); then a 1 TiB tensor (marker oom) fails with torch.cuda.OutOfMemoryError while the
weights (marker weights) hold memory. stdout: "sites: steps=N", then "caught OutOfMemoryError"."""
import argparse

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=10)
args = ap.parse_args()

w = torch.ones(1024, 1024, device="cuda")  # cutrace: weights
layer = torch.nn.Linear(1024, 1024).cuda()  # cutrace: module-cuda
for step in range(args.steps):
    batch = torch.full((1024, 1024), float(step))  # pageable
    x = batch.cuda()  # cutrace: cuda-copy
    loss = (x * w).sum()
    value = loss.item()  # cutrace: item
    text = "{:.3f}".format(loss)  # cutrace: format
print("sites: steps=%d" % args.steps)
try:
    torch.empty(1 << 40, dtype=torch.uint8, device="cuda")  # cutrace: oom
except torch.cuda.OutOfMemoryError:
    print("caught OutOfMemoryError")
