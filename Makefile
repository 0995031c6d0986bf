# cutrace top-level build. Each directory owns a build.mk fragment that adds its targets; this
# file holds what they share: toolchain, flags, dependency checks and the user-facing targets.
#
#   make        build everything into build/
#   make test   build and run the whole suite (ends with "N passed, N failed")
#   make demo   trace the training-loop workload on the simulated GPU, show its analysis and
#               write its HTML report
#   make bench  speed and size figures (never asserted by make test)

CUDA_HOME ?= /usr/local/cuda
CUDA_INC  := $(CUDA_HOME)/include
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= gcc
PYTHON    ?= python3
B         := build

ifeq ($(wildcard $(CUDA_INC)/cuda.h),)
$(error cuda.h not found in $(CUDA_INC): install the CUDA 13 toolkit or set CUDA_HOME=/path/to/cuda)
endif

# ccache (installed by the dependency check below where it can be) keeps what the compiler made
# for the next clone: the build compiles the tracer, the analyzer twice for its profile and once
# under sanitizers, and the tests, 3 of make test's 12.6 minutes on the 2-core machine, for
# sources that mostly did not change. It hashes every input (sources, headers, flags, compiler,
# profile data) and replays the compiler's warnings. CUTRACE_CCACHE= (empty): without it.
CUTRACE_CCACHE ?= $(shell command -v ccache 2>/dev/null)
ifneq ($(CUTRACE_CCACHE),)
ifeq ($(findstring ccache,$(CC)),)
override CC := $(CUTRACE_CCACHE) $(CC)
endif
endif

# Every CPU by default (make -jN on the command line still decides): a serial build was a fifth
# of `make test`'s time on the 2-core machine.
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)

WARN      := -Wall -Wextra -Werror
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 $(WARN) -fno-strict-aliasing -I$(CUDA_INC) -Itrace-format
# -O1, as ASan's authors advise, after CFLAGS' -O2: at -O2 the sanitizer build took twice the
# compile time (trace-format/ct_decode.c 25 s against 9 s, the build's longest file) for reports
# no better. SAN_OPT is shared with the race suite's ThreadSanitizer build. At -O1 GCC's
# format-truncation warning no longer sees the bounds the -O2 build of the same code proves.
SAN_OPT   := -O1 -Wno-format-truncation
SANITIZE  := $(SAN_OPT) -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
PICFLAGS  := -fPIC

# Debian packages the build needs, checked once per build tree; ccache it installs when it can,
# and goes on without it when it cannot.
DEB_DEPS  := libzstd-dev libunwind-dev libsqlite3-dev zlib1g-dev

.PHONY: all test demo bench fuzz clean
all:

$(B)/.deps-ok: Makefile
	@mkdir -p $(B)
	@missing=""; for d in $(DEB_DEPS); do \
	  dpkg-query -W -f='$${Status}' "$$d" 2>/dev/null | grep -q 'ok installed' || \
	    missing="$$missing $$d"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages:$$missing"; \
	    (apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	     { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $$missing >/dev/null; }) || \
	    { echo "error: apt-get install$$missing failed" >&2; exit 1; }; \
	  else \
	    echo "error: missing build dependencies; run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi
	@if ! command -v ccache >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian package: ccache"; \
	  apt-get install -y -qq ccache >/dev/null 2>&1 || \
	    echo "ccache could not be installed: building without it"; \
	fi
	@touch $@

# Every object depends on the dependency check (order-only) and on its headers (gcc -MMD).
$(B)/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@

# The same sources built with sanitizers, for the format library and the analyzer's tests.
$(B)/asan/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -MMD -MP -c $< -o $@

# tests/build.mk first: it defines ctt_suite, which the other fragments call.
include tests/build.mk
include $(wildcard trace-format/build.mk)
include $(wildcard preload/build.mk)
include $(wildcard analyzer/build.mk)
include $(wildcard tests/fakecuda/build.mk)
include $(wildcard tests/fakenccl/build.mk)
include $(wildcard tests/workloads/build.mk)
include $(wildcard tests/bench/build.mk)
include $(wildcard tests/fuzz/build.mk)
include $(sort $(wildcard tests/*/suite.mk))

# The demo: the training-loop workload in its starved-GPU configuration (a 50 ms data loader,
# pageable batches) on a simulated H100, traced by `cutrace run`, then analyzed: the summary, a
# timeline and the HTML report. The simulation stands in for the machine's driver and runtime
# through the library path, as on a real system.
# It builds only what it runs (no sanitizer or test builds), into a log, so that what it prints
# is the analysis.
DEMO_DIR  := $(B)/demo
DEMO_DEPS := $(CUTRACE_BIN) $(CUTRACE_SO) $(FCDRV_LIB) $(FCRT_LIB) $(WL_DIR)/train_loop $(WL_KERNELS)
demo:
	@mkdir -p $(B) && rm -rf $(DEMO_DIR)
	@echo "building cutrace, the simulated CUDA and train_loop (log: $(B)/demo-build.log)"
	@$(MAKE) --no-print-directory $(DEMO_DEPS) >$(B)/demo-build.log 2>&1 || \
	  { tail -n 30 $(B)/demo-build.log; echo "make demo: the build failed (log: $(B)/demo-build.log)" >&2; exit 1; }
	@mkdir -p $(DEMO_DIR)
	@echo "== train_loop on a simulated H100, traced by cutrace run (its output: $(DEMO_DIR)/train_loop.out) =="
	@LD_LIBRARY_PATH=$(abspath $(FAKECUDA_DIR)) FAKECUDA_DEVICES=h100 \
	  FAKECUDA_HOST_KERNELS=$(abspath $(WL_KERNELS)) \
	  $(CUTRACE_BIN) run --libcuda $(abspath $(FAKECUDA_DIR))/libcuda.so.1 \
	  -o $(DEMO_DIR)/traces -- $(WL_DIR)/train_loop --verify >$(DEMO_DIR)/train_loop.out
	@echo "$$ cutrace summary $(DEMO_DIR)/traces"
	@$(CUTRACE_BIN) summary $(DEMO_DIR)/traces
	@$(CUTRACE_BIN) timeline $(DEMO_DIR)/traces -o $(DEMO_DIR)/timeline.json
	@$(CUTRACE_BIN) report $(DEMO_DIR)/traces -o $(DEMO_DIR)/report.html --title "cutrace demo: train_loop on a simulated H100"
	@echo "open the HTML report in a browser: file://$(abspath $(DEMO_DIR))/report.html"

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
