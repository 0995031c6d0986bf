# tests/format's tests and helpers built with sanitizers against the sanitized library; tests
# that run `cutrace` run $(B)/asan/bin/cutrace.
$(eval $(call ctt_suite,format-asan,$(patsubst %.c,$(B)/asan/%.o,$(wildcard tests/format/test-*.c) tests/format/fmt.c) $(CTTRACE_ASAN_LIB),$(SANITIZE) $(CTTRACE_LDLIBS),$(CUTRACE_ASAN_BIN),asan))
