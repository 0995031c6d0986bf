"""example: runs one of PyTorch's own examples (pytorch/examples at 77f55b9, under EX_ROOT,
read-only) unmodified, shortened and fed from outside, as a user would try cutrace on it:

    example.py NAME [the example's arguments]

runs EX_ROOT/NAME/main.py as __main__ with those arguments, after
- torchvision's FakeData capped at FAKE_SIZE samples (imagenet --dummy: 1,281,167 otherwise),
  or, FAKE_SIZE being a comma-separated list, the Nth dataset made at the Nth (the last for the
  later ones: imagenet makes its training set first, then its validation set);
- datasets.MNIST replaced by FakeData of MNIST's shape (1x28x28, 10 classes), capped as above
  (no download: the examples would fetch MNIST from the network);
- torch.backends.cudnn.benchmark set when EX_CUDNN_BENCHMARK=1 (cuDNN autotunes each
  convolution's first shape);
- the working directory made EX_WORKDIR (the examples write checkpoints and images there).
Nothing else changes: the examples' loops, loaders, models and prints are theirs."""
import os
import runpy
import sys

import torch
from torchvision import datasets

name = sys.argv[1]
root = os.environ.get("EX_ROOT", "/work/shared/third_party/pytorch-examples")
sizes = [int(n) for n in os.environ.get("FAKE_SIZE", "320").split(",")]
main = os.path.join(root, name, "main.py")

fake_init = datasets.FakeData.__init__
made = 0


def capped(self, size=1000, *args, **kwargs):
    global made
    cap = sizes[min(made, len(sizes) - 1)]
    made += 1
    fake_init(self, min(size, cap), *args, **kwargs)


def mnist(_root, train=True, download=False, transform=None, target_transform=None):
    # the test set's images differ from the training set's
    return datasets.FakeData(60000 if train else 10000, (1, 28, 28), 10, transform,
                             target_transform, random_offset=0 if train else 60000)


datasets.FakeData.__init__ = capped
datasets.MNIST = mnist
if os.environ.get("EX_CUDNN_BENCHMARK") == "1":
    torch.backends.cudnn.benchmark = True
work = os.environ.get("EX_WORKDIR")
if work:
    os.makedirs(os.path.join(work, "results"), exist_ok=True)
    os.chdir(work)
sys.argv = [main] + sys.argv[2:]
sys.path.insert(0, os.path.dirname(main))
runpy.run_path(main, run_name="__main__")
