# The workload programs (see tests/workloads/README.md) and the host implementations of their
# kernels, all into $(B)/tests/workloads/. The .cu programs are linked by nvcc against NVIDIA's
# libcudart.so.13 (-cudart shared) and the driver-API program against NVIDIA's link stub of
# libcuda.so.1; at run time LD_LIBRARY_PATH=$(B)/tests/fakecuda puts the simulation first.

WL_DIR      := $(B)/tests/workloads
# Flags live in this file, so what nvcc builds depends on it too.
WL_HEADERS  := tests/workloads/wl_common.h tests/workloads/wl_kernels.h tests/workloads/build.mk
WL_CU_PROGS := $(addprefix $(WL_DIR)/,train_loop threads fork_exec dies capture_steps graph_built long_names)
WL_C_PROGS  := $(addprefix $(WL_DIR)/,vram_peak rt_memory driver_api loader_tree ts_phases ts_native)
# Runtime kernels captured and launched as graphs through the driver API (NVIDIA's link stub).
WL_GRAPH_PROGS := $(WL_DIR)/graph_steps
WL_KERNELS  := $(WL_DIR)/libworkload_kernels.so
WL_TORCH    := $(WL_DIR)/torch/libtorch_cuda.so
# Machine code for each major architecture CUDA 13 supports (Turing is its oldest) plus PTX, as
# a library shipping to every GPU would; the simulated T4, A100 and H100 each find their own.
WL_ARCH     := -gencode arch=compute_75,code=[sm_75,compute_75] \
               -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
WL_NVFLAGS  := -O2 -std=c++17 -Xcompiler -Wall,-Wextra -Werror all-warnings
# driver_api's cubins, one per major architecture (a cubin holds one).
WL_CUBINS   := $(foreach a,75 80 90,$(WL_DIR)/driver_api_kernels.sm_$(a).cubin)

# py_loader runs from the build directory, next to the cubins it loads.
WL_PY_PROGS := $(WL_DIR)/py_loader $(WL_DIR)/py_sites $(WL_DIR)/py_loader_tree

# A C program on NVIDIA's cuBLAS and cuBLASLt (linked as a user would, run on NVIDIA's runtime).
WL_BLAS_PROGS := $(WL_DIR)/cublas_roofline
# Programs naming their phases with NVTX (NVIDIA's header-only nvtx3, which dlopens its tool).
WL_NVTX_PROGS := $(WL_DIR)/nvtx_ranges $(WL_DIR)/nvtx3_ranges

WORKLOADS   := $(WL_CU_PROGS) $(WL_GRAPH_PROGS) $(WL_C_PROGS) $(WL_PY_PROGS) $(WL_KERNELS) $(WL_TORCH) $(WL_BLAS_PROGS) $(WL_NVTX_PROGS)
all: $(WORKLOADS)

$(WL_BLAS_PROGS): $(WL_DIR)/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart

$(WL_DIR)/nvtx_ranges: tests/workloads/nvtx_ranges.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread

# NVTX's C++ API (nvtx3.hpp), compiled as C++17 the way its documentation uses it.
$(WL_DIR)/nvtx3_ranges: tests/workloads/nvtx3_ranges.cpp
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -std=c++17 -Wall -Wextra -Werror -I$(CUDA_INC) -o $@ $< -L$(CUDA_HOME)/lib64 -lcudart -ldl -lpthread

$(WL_DIR)/py_loader: tests/workloads/py_loader.py $(WL_CUBINS)
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(WL_DIR)/py_sites $(WL_DIR)/py_loader_tree: $(WL_DIR)/%: tests/workloads/%.py
	@mkdir -p $(dir $@)
	install -m 0755 $< $@

$(WL_CU_PROGS): $(WL_DIR)/%: tests/workloads/%.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared $(WL_NVFLAGS) $(WL_ARCH) -o $@ $<

$(WL_GRAPH_PROGS): $(WL_DIR)/%: tests/workloads/%.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared $(WL_NVFLAGS) $(WL_ARCH) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

$(WL_DIR)/driver_api_kernels.sm_%.cubin: tests/workloads/driver_api_kernels.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -cubin $(WL_NVFLAGS) -arch=sm_$* -o $@ $<

$(WL_DIR)/driver_api_kernels.fatbin: tests/workloads/driver_api_kernels.cu $(WL_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin $(WL_NVFLAGS) $(WL_ARCH) -o $@ $<

# driver_api embeds the images with .incbin; gcc does not see them as dependencies.
$(WL_DIR)/driver_api.o: $(WL_CUBINS) $(WL_DIR)/driver_api_kernels.fatbin
$(WL_DIR)/driver_api.o: CFLAGS += -DWL_IMAGES=\"$(WL_DIR)/driver_api_kernels\"

$(WL_DIR)/driver_api: $(WL_DIR)/driver_api.o
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64/stubs -lcuda

$(WL_DIR)/vram_peak $(WL_DIR)/rt_memory $(WL_DIR)/loader_tree $(WL_DIR)/ts_phases $(WL_DIR)/ts_native: %: %.o
	$(CC) $(CFLAGS) -o $@ $^ -L$(CUDA_HOME)/lib64 -lcudart

$(WL_KERNELS): $(WL_DIR)/kernels.o
	$(CC) $(CFLAGS) -shared -o $@ $^

$(WL_TORCH): tests/workloads/torch_stub.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<
