# `make bench` (tests/bench/README.md): tracer overhead per call against four baselines, trace
# size, analyzer throughput and tracer memory. Programs and baseline interposers are built into
# $(B)/tests/bench/ (with `all`, except the LTTng interposer, which needs liblttng-ust-dev);
# results go to $(B)/bench/results.json and stdout. Nothing here is asserted by `make test`.
BENCH_DIR      := $(B)/tests/bench
BENCH_CALLS    := $(BENCH_DIR)/bench_calls
BENCH_TRACESTAT := $(BENCH_DIR)/tracestat
BENCH_RUSAGE   := $(BENCH_DIR)/rusage
BENCH_NVTX     := $(BENCH_DIR)/bench_nvtx
BENCH_PRELOADS := $(BENCH_DIR)/libib_floor.so $(BENCH_DIR)/libib_naive.so
BENCH_LTTNG    := $(BENCH_DIR)/libib_lttng.so
# tracegen (tests/analyzer/suite.mk, read after this file, so named here by its path)
BENCH_TRACEGEN := $(B)/tests/analyzer/tracegen
# Debian packages of the LTTng and ltrace baselines: installed by `make bench` when missing and
# running as root, otherwise the command is printed and those baselines are reported as null.
BENCH_DEB_DEPS := lttng-tools liblttng-ust-dev ltrace babeltrace2
# The commit whose analyzer section 10 (bench_base.py) times beside the new one: 58899c6, the
# tree before issue 27's restructuring; a later issue passes its own (make bench BENCH_BASE=rev).
BENCH_BASE ?= 58899c6
BENCH_RUN_PREREQS := $(BENCH_CALLS) $(BENCH_TRACESTAT) $(BENCH_RUSAGE) $(BENCH_NVTX) $(BENCH_PRELOADS) $(CUTRACE_BIN) \
                     $(CUTRACE_SO) $(BENCH_TRACEGEN) $(WORKLOADS) $(FAKECUDA_DIR)/libcuda.so.1 \
                     $(FAKECUDA_DIR)/libcudart.so.13 $(B)/tests/tracer/probe

all: $(BENCH_CALLS) $(BENCH_TRACESTAT) $(BENCH_RUSAGE) $(BENCH_NVTX) $(BENCH_PRELOADS)

$(BENCH_DIR)/%.o: CFLAGS += -Itests/bench -fvisibility=hidden

$(BENCH_CALLS): tests/bench/bench_calls.cu tests/workloads/wl_common.h \
                tests/fakecuda/runtime/fakecudart.h
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared $(WL_NVFLAGS) -Itests/workloads -Itests/fakecuda/runtime -o $@ $< \
	  -L$(CUDA_HOME)/lib64/stubs -lcuda

$(BENCH_NVTX): tests/bench/bench_nvtx.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64 -lcudart -ldl

$(BENCH_TRACESTAT): $(BENCH_DIR)/tracestat.o $(CTTRACE_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS)

$(BENCH_RUSAGE): $(BENCH_DIR)/rusage.o
	$(CC) $(CFLAGS) -o $@ $^

$(BENCH_DIR)/libib_%.so: $(BENCH_DIR)/ib_%.o
	$(CC) -shared -o $@ $< -ldl $(if $(filter %lttng.o,$<),-llttng-ust)

$(BENCH_DIR)/ib_floor.o $(BENCH_DIR)/ib_naive.o $(BENCH_DIR)/ib_lttng.o: tests/bench/ib_wrappers.h

# The LTTng interposer is built only where LTTng-UST's headers are (after the install step).
.PHONY: bench-lttng
bench-lttng:
	@if [ -f /usr/include/lttng/tracepoint.h ] || \
	    [ -f /usr/include/$$(gcc -print-multiarch)/lttng/tracepoint.h ]; then \
	  $(MAKE) --no-print-directory $(BENCH_LTTNG); \
	else echo "bench: LTTng-UST headers missing: the LTTng baseline is skipped"; fi

bench: $(BENCH_RUN_PREREQS)
	@missing=""; for d in $(BENCH_DEB_DEPS); do \
	  dpkg-query -W -f='$${Status}' "$$d" 2>/dev/null | grep -q 'ok installed' || \
	    missing="$$missing $$d"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "bench: installing Debian packages:$$missing"; \
	    apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $$missing >/dev/null 2>&1; } || \
	    echo "bench: apt-get install$$missing failed: those baselines are skipped"; \
	  else \
	    echo "bench: for the LTTng and ltrace baselines run: sudo apt-get install -y$$missing"; \
	  fi; \
	fi
	@$(MAKE) --no-print-directory bench-lttng
	$(PYTHON) tests/bench/run_bench.py --build $(B) --out $(B)/bench --base $(BENCH_BASE)
