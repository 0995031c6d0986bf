# The trace format library's tests, linked with the library (and, for tests that run it, the
# cutrace command). tests/format-asan runs the same tests built with sanitizers.
FMT_HELPER_SRCS := tests/format/fmt.c
$(eval $(call ctt_suite,format,$(patsubst %.c,$(B)/%.o,$(FMT_HELPER_SRCS)) $(CTTRACE_LIB),$(CTTRACE_LDLIBS),$(CUTRACE_BIN)))
# test-format_tables reads FORMAT.md from the source tree.
$(B)/tests/format/test-format_tables.o $(B)/asan/tests/format/test-format_tables.o: CFLAGS += -DCT_SRCDIR='"$(CURDIR)"'
