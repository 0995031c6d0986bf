# Test harness and the suite macro. A suite is a directory tests/NAME/ holding list.h (one
# TEST_ENTRY(name) per test), test-TOPIC.c files (the TEST_IMPLs of one topic each) and suite.mk,
# which calls:
#
#   $(eval $(call ctt_suite,NAME,EXTRA_OBJS,LDLIBS,PREREQS))
#
# EXTRA_OBJS are linked into the runner; PREREQS are built before the suite runs (libraries and
# programs the tests execute). Suites built with sanitizers pass objects from $(B)/asan/ and
# -fsanitize in LDLIBS.

CTT_HARNESS_OBJS := $(B)/tests/harness/ctt.o $(B)/tests/harness/ctt_machine.o
CTT_ASAN_HARNESS_OBJS := $(B)/asan/tests/harness/ctt.o $(B)/asan/tests/harness/ctt_machine.o

# $(1) suite, $(2) extra objects, $(3) libs, $(4) prerequisites, $(5) empty or "asan"
define ctt_suite
TEST_SUITES += $(1)
$(1)_TEST_OBJS := $$(patsubst %.c,$(B)/$(if $(5),asan/,)%.o,$$(wildcard tests/$(1)/test-*.c))
$(B)/tests/test-$(1): $$($(1)_TEST_OBJS) $(2) $(if $(5),$(CTT_ASAN_HARNESS_OBJS),$(CTT_HARNESS_OBJS)) tests/harness/runner.c tests/$(1)/list.h | $(4)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $(if $(5),$$(SANITIZE),) -DCTT_SUITE=$(1) -DCTT_LIST='"$(CURDIR)/tests/$(1)/list.h"' -Itests/harness -Itests/$(1) \
	  -o $$@ tests/harness/runner.c $$($(1)_TEST_OBJS) $(2) \
	  $(if $(5),$(CTT_ASAN_HARNESS_OBJS),$(CTT_HARNESS_OBJS)) $(3)
$(B)/tests/test-$(1): CFLAGS += -Itests/harness
test-bins: $(B)/tests/test-$(1) $(4)
endef

.PHONY: test-bins
test-bins:

$(B)/tests/%.o $(B)/asan/tests/%.o: CFLAGS += -Itests/harness

# The suite is everything the runners find; tests/run.sh runs them, several at once on free CPUs,
# and sums their verdicts. The longest start first (CI's times on the 2-core machine), so that no
# long one is left to run alone at the end.
TEST_FIRST := tracer analyzer-asan analyzer examples pytorch faults robust
test: test-bins
	@MAKEFLAGS= MAKELEVEL= CT_BUILD=$(abspath $(B)) bash tests/run.sh $(addprefix $(abspath $(B))/tests/test-,\
	  $(foreach s,$(TEST_FIRST),$(filter $(s),$(TEST_SUITES))) $(filter-out $(TEST_FIRST),$(TEST_SUITES)))
