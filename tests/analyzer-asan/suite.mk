# tests/analyzer's tests built and run with sanitizers (see list.h here).
include tests/analyzer/sources.mk
$(eval $(call ctt_suite,analyzer-asan,$(patsubst %.c,$(B)/asan/%.o,$(AN_TEST_SRCS) $(AN_HELPER_SRCS) $(AN_UNIT_SRCS)) $(CTTRACE_ASAN_LIB),$(CTTRACE_LDLIBS) -lm,$(TRACEGEN) $(CUTRACE_ASAN_BIN) duckdb-venv,asan))
