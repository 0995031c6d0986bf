# The simulated runtime's suite (tests/sim-runtime): in-process tests link the runner against
# $(FAKECUDA_DIR)/libcudart.so.13 with an RPATH (DT_RPATH, searched before the default path that
# holds NVIDIA's runtime, and also for the runtime's dlopen of libcuda.so.1); program tests run
# nvcc-built programs with LD_LIBRARY_PATH, some through a stand-in driver that logs requests.
SIMRT_B    := $(B)/tests/sim-runtime
SIMRT_CU   := $(addprefix $(SIMRT_B)/,vecadd threads features)
SIMRT_PROGS := $(SIMRT_CU) $(addsuffix -ptds,$(SIMRT_CU)) $(SIMRT_B)/host_kernels.so $(SIMRT_B)/shim/libcuda.so.1
SIMRT_DRIVER := $(if $(wildcard tests/fakecuda/driver/part.mk),$(FAKECUDA_DIR)/libcuda.so.1)

# Each program twice: legacy default stream, and --default-stream per-thread (NAME-ptds).
$(SIMRT_CU): $(SIMRT_B)/%: tests/sim-runtime/%.cu tests/fakecuda/runtime/fakecudart.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -Itests/fakecuda/runtime -o $@ $<

$(addsuffix -ptds,$(SIMRT_CU)): $(SIMRT_B)/%-ptds: tests/sim-runtime/%.cu tests/fakecuda/runtime/fakecudart.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared --default-stream per-thread -Itests/fakecuda/runtime -o $@ $<

$(SIMRT_B)/host_kernels.so: tests/sim-runtime/host_kernels.c tests/fakecuda/fakecuda.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -Itests/fakecuda -o $@ $<

$(SIMRT_B)/shim/libcuda.so.1: tests/sim-runtime/shim_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $< -ldl

$(SIMRT_B)/%.o: CFLAGS += -Itests/fakecuda/runtime \
  -DSIMRT_REQUESTS='"$(abspath tests/fakecuda/runtime/getprocaddress.txt)"' \
  -DSIMRT_RUNTIME_DIR='"$(abspath tests/fakecuda/runtime)"' -DSIMRT_PYTHON='"$(PYTHON)"' \
  -DSIMRT_HANDWRITTEN='"$(abspath $(FCRT_HAND))"' \
  -DSIMRT_NV_CUDART='"$(realpath $(CUDA_HOME)/lib64/libcudart.so.13)"'

$(eval $(call ctt_suite,sim-runtime,$(SIMRT_B)/simrt.o,\
  -L$(FAKECUDA_DIR) -l:libcudart.so.13 -Xlinker --disable-new-dtags -Xlinker -rpath \
  -Xlinker $(abspath $(FAKECUDA_DIR)) -ldl -lpthread,\
  $(FAKECUDA_DIR)/libcudart.so.13 $(SIMRT_DRIVER) $(SIMRT_PROGS)))
