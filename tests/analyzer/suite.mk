# The analyzer's suites: `analyzer` (cutrace summary and timeline on synthetic traces from
# tracegen, and on traces of the workloads when the tracer is built) and `analyzer-asan` (the
# same tests, with the analyzer's modules, the format library and cutrace built with
# sanitizers; see tests/analyzer-asan/). tracegen (tests/analyzer/gen/) writes synthetic traces
# through the format library; the benchmarks reuse it.
include tests/analyzer/sources.mk

$(TRACEGEN): $(B)/tests/analyzer/gen/tracegen.o $(B)/tests/analyzer/gen/tracegen_random.o \
    $(CTTRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS)

all: $(TRACEGEN)

# (-Itests/tracer: tr_confine.h, the cgroups of test-pairs.c and test-pysites.c)
$(B)/tests/analyzer/%.o $(B)/asan/tests/analyzer/%.o: CFLAGS += $(ANALYZER_INC) -Itests/analyzer -Itests/tracer -Itests/workloads

$(eval $(call ctt_suite,analyzer,$(patsubst %.c,$(B)/%.o,$(AN_HELPER_SRCS) $(AN_UNIT_SRCS)) $(CTTRACE_LIB),$(CTTRACE_LDLIBS) -lm,$(TRACEGEN) $(CUTRACE_BIN) duckdb-venv))


# the diagnosis pairs the tests trace (make bench reads them too)
$(B)/tests/analyzer/test-pairs.o $(B)/asan/tests/analyzer/test-pairs.o: CFLAGS += \
  -DAN_PAIRS='"$(CURDIR)/tests/workloads/diag_pairs.txt"'

# the traces the -j tests read besides tracegen's: the corpus, the robustness suite's
# regression traces and the shared traces
$(B)/tests/analyzer/test-jobs.o $(B)/asan/tests/analyzer/test-jobs.o: CFLAGS += \
  -DAN_ROOT='"$(CURDIR)"' -DAN_SHARED_TRACES='"$(abspath ../shared/data/traces)"'

# the Kineto traces HTA's tests use (when present) and HTA's numbers for them
$(B)/tests/analyzer/test-kineto.o $(B)/asan/tests/analyzer/test-kineto.o \
$(B)/tests/analyzer/test-kineto_model.o $(B)/asan/tests/analyzer/test-kineto_model.o \
$(B)/tests/analyzer/test-kineto_input.o $(B)/asan/tests/analyzer/test-kineto_input.o: CFLAGS += \
  -DAN_KINETO_DATA='"$(abspath ../shared/data/kineto-hta)"' \
  -DAN_KINETO_REF='"$(CURDIR)/tests/analyzer/kineto/hta-reference.txt"' \
  -DAN_KINETO_SCRIPTS='"$(CURDIR)/tests/analyzer/kineto"'

# the example queries the export test runs, and its DuckDB: PyPI's, in a virtual environment
# outside the clone (tests/pytorch/venv.sh; its tests are skipped when PyPI cannot be reached)
$(B)/tests/analyzer/test-export.o $(B)/asan/tests/analyzer/test-export.o: CFLAGS += \
  -DAN_SQLITE_MD='"$(CURDIR)/analyzer/SQLITE.md"' -DAN_DUCKDB_STATUS='"$(abspath $(AN_DUCKDB_STATUS))"'

.PHONY: duckdb-venv
duckdb-venv:
	@bash tests/pytorch/venv.sh $(AN_DUCKDB_VENV) tests/analyzer/duckdb-requirements.txt \
	  $(AN_DUCKDB_STATUS) duckdb
