# Robustness (tests/robust): hostile traces, trace files in shared directories, names that need
# escaping, and the replay of every crash the fuzzers found (regress/). Built with ASan/UBSan:
# the in-process reads run under the sanitizers; the commands run in both cutrace builds.
RB_SRCS := tests/robust/rb.c tests/fuzz/fz.c tests/analyzer/tjson.c
$(B)/asan/tests/robust/%.o: CFLAGS += -Itests/fuzz -Itests/analyzer -DRB_SRC='"$(CURDIR)/tests/robust"'
$(eval $(call ctt_suite,robust,$(patsubst %.c,$(B)/asan/%.o,$(RB_SRCS)) $(CTTRACE_ASAN_LIB),$(SANITIZE) $(CTTRACE_LDLIBS),$(CUTRACE_BIN) $(CUTRACE_ASAN_BIN) $(CUTRACE_SO) $(WORKLOADS) $(FAKECUDA_DIR)/libcuda.so.1 $(FAKECUDA_DIR)/libcudart.so.13,asan))
