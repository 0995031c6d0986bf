# The bench suite: one smoke test of the `make bench` harness (run_bench.py --quick, about 2 s):
# every results.json key is there, counts are exact, nothing about speed is asserted.
# tjson (tests/analyzer/tjson.c) reads the JSON.
BENCH_TJSON := $(B)/tests/analyzer/tjson.o

$(B)/tests/bench/test-%.o: CFLAGS += -Itests/analyzer \
  -DBENCH_DRIVER='"$(CURDIR)/tests/bench/run_bench.py"' -DBENCH_PYTHON='"$(PYTHON)"'

$(eval $(call ctt_suite,bench,$(BENCH_TJSON),,$(BENCH_RUN_PREREQS)))
