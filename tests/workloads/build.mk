# The workload programs (see tests/workloads/README.md) and the host implementations of their
# kernels, all into $(B)/tests/workloads/. The .cu programs are linked by nvcc against NVIDIA's
# libcudart.so.13 (-cudart shared) and the driver-API program against NVIDIA's link stub of
# libcuda.so.1; at run time LD_LIBRARY_PATH=$(B)/tests/fakecuda puts the simulation first.

WL_DIR      := $(B)/tests/workloads
WL_HEADERS  := tests/workloads/wl_common.h tests/workloads/wl_kernels.h
WL_CU_PROGS := $(addprefix $(WL_DIR)/,train_loop threads fork_exec dies)
WL_C_PROGS  := $(addprefix $(WL_DIR)/,vram_peak driver_api)
WL_KERNELS  := $(WL_DIR)/libworkload_kernels.so
WL_ARCH     := -arch=sm_90
WL_NVFLAGS  := -O2 -std=c++17 $(WL_ARCH) -Xcompiler -Wall,-Wextra -Werror all-warnings

WORKLOADS   := $(WL_CU_PROGS) $(WL_C_PROGS) $(WL_KERNELS)
all: $(WORKLOADS)

$(WL_CU_PROGS): $(WL_DIR)/%: tests/workloads/%.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared $(WL_NVFLAGS) -o $@ $<

$(WL_DIR)/driver_api_kernels.cubin: tests/workloads/driver_api_kernels.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -cubin $(WL_NVFLAGS) -o $@ $<

$(WL_DIR)/driver_api_kernels.fatbin: tests/workloads/driver_api_kernels.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin $(WL_NVFLAGS) -o $@ $<

# driver_api embeds both images with .incbin; gcc does not see them as dependencies.
$(WL_DIR)/driver_api.o: $(WL_DIR)/driver_api_kernels.cubin $(WL_DIR)/driver_api_kernels.fatbin
$(WL_DIR)/driver_api.o: CFLAGS += -DWL_CUBIN=\"$(WL_DIR)/driver_api_kernels.cubin\" \
                                  -DWL_FATBIN=\"$(WL_DIR)/driver_api_kernels.fatbin\"

$(WL_DIR)/driver_api: $(WL_DIR)/driver_api.o
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64/stubs -lcuda

$(WL_DIR)/vram_peak: $(WL_DIR)/vram_peak.o
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64 -lcudart

$(WL_KERNELS): $(WL_DIR)/kernels.o
	$(CC) $(CFLAGS) -shared -o $@ $^
