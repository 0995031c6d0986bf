# The analyzer's suites: `analyzer` (cutrace summary and timeline on synthetic traces from
# tracegen and, when the tracer and workloads are built, on traces of the workloads) and
# `analyzer-asan` (the same tests, the analyzer's modules and cutrace built with sanitizers).
# tracegen (tests/analyzer/gen/) writes synthetic traces through the format library; the
# benchmarks reuse it.
TRACEGEN := $(B)/tests/analyzer/tracegen

$(TRACEGEN): $(B)/tests/analyzer/gen/tracegen.o $(CTTRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS)

all: $(TRACEGEN)

$(eval $(call ct_test_suite,analyzer,$(ANALYZER_OBJS) $(CTTRACE_LIB),$(CTTRACE_LDLIBS) -lm,$(TRACEGEN) $(CUTRACE_BIN)))
