# The report suite: `cutrace report` pages opened in headless Chromium (Debian's chromium,
# installed by tests/report/chromium.sh when missing; the suite is skipped when it cannot be)
# and checked against `cutrace summary --json` by check_report.py (Python 3 standard library).
# The demo report runs train_loop under the tracer on the simulated CUDA, as `make demo` does.
RP_STATUS := $(B)/tests/report/chromium.status

.PHONY: report-chromium
report-chromium:
	@bash tests/report/chromium.sh $(RP_STATUS)

$(eval $(call ctt_suite,report,$(B)/tests/report/rp.o $(B)/tests/analyzer/an_helpers.o \
  $(B)/tests/analyzer/tjson.o,-lm,\
  report-chromium $(TRACEGEN) $(CUTRACE_BIN) $(CUTRACE_SO) $(FCDRV_LIB) $(FCRT_LIB) \
  $(WL_DIR)/train_loop $(WL_KERNELS)))

$(B)/tests/report/%.o: CFLAGS += -Itests/analyzer -DRP_SRC='"$(CURDIR)/tests/report"' \
  -DRP_STATUS='"$(abspath $(RP_STATUS))"'
