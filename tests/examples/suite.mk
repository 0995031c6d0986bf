# Programs nobody here wrote (issue 28 item 5): PyTorch's own examples (pytorch/examples at
# 77f55b9, read-only under EX_ROOT, never copied into the clone), run unmodified by
# tests/examples/example.py, which shortens and feeds them from outside (FakeData in place of
# downloads, capped at FAKE_SIZE samples), on the pytorch suite's virtual environment and
# simulated driver (tests/pytorch/suite.mk), traced by cutrace; each test checks the verdict an
# expert gives after reading the program. NVIDIA's simpleMultiCopy, the fifth program of the
# issue, is the tracer suite's (cuda_samples_simpleMultiCopy_own_timing_is_no_defect), and a
# loop synchronizing through .item() with no DataLoader the pytorch suite's
# (pytorch_no_dataloader_no_loader_finding).
# The simulated driver's directory is tests/nvrt/suite.mk's NV_DRV_DIR, spelt out: that file is
# included after this one.
EX_ROOT ?= $(abspath ../shared/third_party/pytorch-examples)

$(eval $(call ctt_suite,examples,$(B)/tests/examples/ex.o $(B)/tests/pytorch/pt.o \
  $(B)/tests/analyzer/an_helpers.o $(B)/tests/analyzer/tjson.o,-lm,\
  pytorch-venv $(B)/tests/nvrt/driver/libcuda.so.1 $(FCDRV_LIB) $(CUTRACE_BIN) $(CUTRACE_SO)))

$(B)/tests/examples/%.o: CFLAGS += -Itests/analyzer -Itests/pytorch \
  -DEX_SRC='"$(CURDIR)/tests/examples"' -DEX_ROOT='"$(EX_ROOT)"'

# `make bench` section 12 (tests/bench/bench_examples.py) runs imagenet on the same stack.
bench: pytorch-venv $(B)/tests/nvrt/driver/libcuda.so.1
