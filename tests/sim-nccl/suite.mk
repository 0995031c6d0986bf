# The simulated NCCL's tests: C programs calling NCCL directly, their ranks forked from the
# test. They link the simulated libnccl.so.2 and libcuda.so.1 (-rdynamic: the runner's
# cuLaunchKernel wrapper stands in for a tracer's), and share the driver tests' helpers (sd.o).
SN_OUT := $(B)/tests/sim-nccl
sn_comma := ,
$(eval $(call ctt_suite,sim-nccl,$(SN_OUT)/sn.o $(B)/tests/sim-driver/sd.o,\
  -L$(FN_OUT) -lnccl -L$(FAKECUDA_DIR) -lcuda \
  -Wl$(sn_comma)-rpath$(sn_comma)$(abspath $(FN_OUT)):$(abspath $(FAKECUDA_DIR)) -rdynamic -ldl -lpthread -lm,\
  $(FN_LIB) $(FN_OUT)/libnccl.so $(FCDRV_LIB) $(FAKECUDA_DIR)/libcuda.so \
  pytorch-venv $(NV_DRV_DIR)/libcuda.so.1))

# SN_VENV: PyTorch's virtual environment (tests/pytorch), whose nvidia-nccl wheel holds NVIDIA's
# 2.30.7 to compare exports with; SN_PT_STATUS says whether it could be made (the DDP test runs
# its torchrun, on $(NV_DRV_DIR), the directory holding only the simulated driver).
$(SN_OUT)/sn.o $(SN_OUT)/test-%.o: CFLAGS += -Itests/sim-driver -DSN_REPO='"$(abspath .)"' \
  -DSN_VENV='"$(or $(PT_VENV),$(HOME)/.cache/cutrace/venv)"' -DSN_PT_STATUS='"$(abspath $(PT_STATUS))"'
