# NVIDIA's own CUDA runtime (libcudart.so.13 from the toolkit) and cuBLAS on the simulated
# driver, traced by cutrace; and the driver's answers they depend on (its private export
# tables, the public functions they call). The runner links the simulated libcuda.so.1 (for the
# driver tests, as sim-driver does); programs under NVIDIA's runtime run with LD_LIBRARY_PATH
# naming $(NV_DRV_DIR), which holds only libcuda.so.1, so the dynamic loader finds NVIDIA's
# libcudart.so.13 on the default path (ours lives in $(FAKECUDA_DIR), next to the driver).
NV_OUT     := $(B)/tests/nvrt
NV_DRV_DIR := $(NV_OUT)/driver
NV_PROGS   := $(NV_OUT)/cublas_gemm $(NV_OUT)/forked $(NV_OUT)/sm75_only.fatbin $(NV_OUT)/graph_rt
nv_comma   := ,

$(NV_DRV_DIR)/libcuda.so.1: $(FCDRV_LIB)
	@mkdir -p $(dir $@)
	ln -sf $(abspath $(FCDRV_LIB)) $@

# A plain C program on cuBLAS and NVIDIA's runtime, as a user would build it.
$(NV_OUT)/cublas_gemm: tests/nvrt/cublas_gemm.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcublas -lcudart -lm

# The runtime is whichever libcudart.so.13 the loader finds: no RPATH.
$(NV_OUT)/forked: tests/nvrt/forked.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcudart -lpthread

# CUDA graphs through NVIDIA's runtime; the kernel's host implementation is in the program,
# found by the driver among its dynamic symbols.
$(NV_OUT)/graph_rt: tests/nvrt/graph_rt.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -gencode arch=compute_90,code=sm_90 -Xlinker --export-dynamic \
	  -o $@ $<

# Code for Turing only, as the fatbins cuBLAS ships for sm_75 alone.
$(NV_OUT)/sm75_only.fatbin: tests/workloads/driver_api_kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -gencode arch=compute_75,code=sm_75 -o $@ $<

$(eval $(call ctt_suite,nvrt,$(B)/tests/nvrt/nv.o $(B)/tests/analyzer/an_helpers.o $(B)/tests/tracer/tr.o $(B)/tests/tracer/gr_truth.o \
  $(B)/tests/analyzer/tjson.o $(B)/tests/fakecuda/driver/fc_integrity.o $(CTTRACE_LIB),\
  $(CTTRACE_LDLIBS) -L$(FAKECUDA_DIR) -lcuda -Wl$(nv_comma)-rpath$(nv_comma)$(abspath $(FAKECUDA_DIR)) -ldl -lpthread -lm,\
  $(NV_DRV_DIR)/libcuda.so.1 $(NV_PROGS) $(WORKLOADS) $(FCDRV_LIB) $(FCRT_LIB) $(FAKECUDA_DIR)/libcuda.so $(CUTRACE_BIN) $(CUTRACE_SO)))

$(B)/tests/nvrt/%.o: CFLAGS += -Itests/analyzer -Itests/tracer -Itests/fakecuda/driver \
  -DNV_CUDART='"$(realpath $(CUDA_HOME)/lib64/libcudart.so.13)"'
