# Sources the two analyzer suites share (included by tests/analyzer/suite.mk and
# tests/analyzer-asan/suite.mk, whichever make reads first). Variables only.
AN_TEST_SRCS := $(wildcard tests/analyzer/test-*.c)
# (an_records: reading traces, for these suites only; the tracer suite's cgroups too: test-pairs.c
# and test-pysites.c run their workloads in a favoured one; and its trace loader, tr.c: test-nvtx.c
# joins GPU records to their calls)
AN_HELPER_SRCS := tests/analyzer/an_helpers.c tests/analyzer/tjson.c tests/analyzer/an_records.c \
  tests/tracer/tr_confine.c tests/tracer/tr.c
# the modules the unit tests call directly (the rest is exercised through the cutrace binary)
AN_UNIT_SRCS := $(addprefix analyzer/base/,cta_map.c cta_out.c cta_period.c cta_sketch.c cta_union.c)
TRACEGEN := $(B)/tests/analyzer/tracegen
# The export test's DuckDB (tests/analyzer/duckdb-requirements.txt), made before either suite runs
AN_DUCKDB_VENV ?= $(HOME)/.cache/cutrace/duckdb
AN_DUCKDB_STATUS := $(B)/tests/analyzer/duckdb.status
