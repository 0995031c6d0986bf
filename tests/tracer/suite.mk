# The tracer's suite (tests/tracer): programs run under `cutrace run` on the simulated CUDA
# stack, traces read back through the trace format library. probe is a small CUDA program with
# one mode per route to the driver (see probe.c); ends.py, a Python program using the driver
# through ctypes that ends by sys.exit or os._exit. cuda-samples' Samples/0_Introduction programs
# are built from ../shared by test-samples.c at test time with samples.mk (skipped if nvcc is not
# installed); libsample_kernels.so holds host implementations of their kernels; samples.txt lists
# those not expected to pass on the simulation, and why.
TRACER_B := $(B)/tests/tracer
TRACER_DRIVER := $(if $(wildcard tests/fakecuda/driver/part.mk),$(FAKECUDA_DIR)/libcuda.so.1)
TRACER_PROBE := $(TRACER_B)/probe
TRACER_CAPTURE := $(TRACER_B)/capture
TRACER_GRAPH_UNLISTED := $(TRACER_B)/graph_unlisted
TRACER_REFERENCE := $(abspath ../shared/reference/cudart-13.0-getprocaddress.txt)
TRACER_SAMPLE_KERNELS := $(TRACER_B)/libsample_kernels.so
# Where samples_cache.sh keeps nvcc's build of the samples for the next clone; empty: nowhere.
SAMPLES_CACHE ?= $(HOME)/.cache/cutrace/cuda-samples
# NVIDIA's NVRTC compiling to PTX for the simulated driver; built only where the toolkit has it
# (its test skips otherwise).
TRACER_NVRTC_PTX := $(if $(wildcard $(CUDA_HOME)/lib64/libnvrtc.so),$(TRACER_B)/nvrtc_ptx)

# -O3: the host vectorizes matrixMul's 301 products (4 s instead of 10 per run)
$(TRACER_SAMPLE_KERNELS): tests/tracer/sample_kernels.c tests/fakecuda/fakecuda.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -fPIC -shared -o $@ $< -lm

$(TRACER_PROBE): $(TRACER_B)/probe.o $(FAKECUDA_DIR)/libcudart.so.13
	$(CC) $(CFLAGS) -o $@ $(TRACER_B)/probe.o -L$(FAKECUDA_DIR) -l:libcudart.so.13 -ldl -lpthread \
	  -Wl,--export-dynamic-symbol=dl_iterate_phdr

$(TRACER_B)/nvrtc_ptx: $(TRACER_B)/nvrtc_ptx.o
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -lcuda

# A driver API program, linked like the driver_api workload (the simulation is found at run time).
$(TRACER_CAPTURE) $(TRACER_GRAPH_UNLISTED): $(TRACER_B)/%: $(TRACER_B)/%.o
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda

$(TRACER_B)/%.o: CFLAGS += -DTR_REFERENCE='"$(TRACER_REFERENCE)"' \
  -DTR_SRCDIR='"$(abspath tests/tracer)"' -DTR_PYSUB_PY='"$(abspath tests/tracer/pysub.py)"' -DTR_PYCODE_PY='"$(abspath tests/tracer/pycode.py)"' -DTR_ENDS_PY='"$(abspath tests/tracer/ends.py)"' \
  -DTR_PYPHASES_PY='"$(abspath tests/tracer/pyphases.py)"' \
  -DTR_NVCC='"$(NVCC)"' -DTR_SAMPLES_CACHE='"$(SAMPLES_CACHE)"' \
  -DTR_SAMPLES='"$(abspath ../shared/third_party/cuda-samples)"' -DTR_NV_CUDART='"$(CUDA_HOME)/lib64/libcudart.so.13"' -DTR_CUDA_INC='"$(CUDA_INC)"'

# test-capture, test-graphs, test-host and test-host_limits read the summary's JSON with the analyzer suite's helpers.
$(TRACER_B)/test-capture.o $(TRACER_B)/test-graphs.o $(TRACER_B)/test-host.o $(TRACER_B)/test-host_limits.o $(TRACER_B)/gr_truth.o $(TRACER_B)/test-causes.o $(TRACER_B)/test-samples.o $(TRACER_B)/test-hostact.o $(TRACER_B)/test-feeder.o: CFLAGS += -Itests/analyzer
# test-causes.c reads through slowfs (tests/slowfs/sf.h)
$(TRACER_B)/test-causes.o: CFLAGS += -Itests/slowfs
$(eval $(call ctt_suite,tracer,$(TRACER_B)/tr.o $(TRACER_B)/tr_confine.o $(TRACER_B)/gr_truth.o $(B)/tests/slowfs/sf.o $(B)/tests/analyzer/an_helpers.o $(B)/tests/analyzer/tjson.o $(CTTRACE_LIB),$(CTTRACE_LDLIBS) -ldl -lpthread -lm,\
  $(CUTRACE_SO) $(CUTRACE_BIN) $(FAKECUDA_DIR)/libcudart.so.13 $(TRACER_DRIVER) $(TRACER_PROBE) $(TRACER_CAPTURE) $(TRACER_GRAPH_UNLISTED) $(TRACER_SAMPLE_KERNELS) $(TRACER_NVRTC_PTX) \
  $(B)/tests/slowfs/slowfs $(WORKLOADS)))
