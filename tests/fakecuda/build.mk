# The simulated CUDA stack: the driver (libcuda.so.1) and the runtime (libcudart.so.13), each in
# its own directory with a part.mk. Both land in $(B)/tests/fakecuda/, the directory tests and
# the demo put first on LD_LIBRARY_PATH.
FAKECUDA_DIR := $(B)/tests/fakecuda
include $(wildcard tests/fakecuda/*/part.mk)
