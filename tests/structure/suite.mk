# The structure suite (tests/structure): the project's checks of its own shape, scripts run on
# the real sources and objects: depcheck.py (no cycle between modules or folders), namecheck.py
# (exported symbols carry their component's prefix), linecheck.py (no hand-written file over 800
# lines). srctree.py holds what the first two share. The objects they read are the build's, so
# the tracer, the analyzer and the format library are built first.
STRUCT_B := $(B)/tests/structure

$(STRUCT_B)/%.o: CFLAGS += -DST_DIR='"$(CURDIR)/tests/structure"' -DST_ROOT='"$(CURDIR)"' \
  -DST_PYTHON='"$(PYTHON)"'

$(eval $(call ctt_suite,structure,$(STRUCT_B)/st.o,,$(CUTRACE_SO) $(CUTRACE_BIN) $(CTTRACE_LIB)))
