# The corpus suite: `cutrace summary`, `summary --json`, `timeline` and `dump` on the traces in
# tests/corpus/traces/ give, byte for byte, the outputs in tests/corpus/expected/ (written by
# tests/corpus/update.sh). It holds the analyzer's outputs still while its code is reorganized;
# a change of output on purpose updates the expected files in the same commit, with the reason.
$(B)/tests/corpus/%.o: CFLAGS += -DCORPUS_ROOT='"$(CURDIR)"'

$(eval $(call ctt_suite,corpus,,,$(CUTRACE_BIN)))
