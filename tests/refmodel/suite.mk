# The differential suite: `cutrace summary --json` against the reference model (refmodel.c,
# rm_tables.c, rm_breakdown.c: a second implementation sharing no code with analyzer/) on traces
# of the workloads, on tracegen's random shapes, on damaged copies and on the recorded trace in
# ../shared (when present).
RM_OBJS := $(addprefix $(B)/tests/refmodel/,refmodel.o rm_tables.o rm_breakdown.o refdiff.o) \
           $(B)/tests/analyzer/an_helpers.o $(B)/tests/analyzer/tjson.o
RM_SHARED_TRACES := $(abspath ../shared/data/traces)

$(B)/tests/refmodel/%.o: CFLAGS += -Itests/analyzer -Itests/refmodel \
  -DRM_SHARED_TRACES='"$(RM_SHARED_TRACES)"'

$(eval $(call ctt_suite,refmodel,$(RM_OBJS) $(CTTRACE_LIB),$(CTTRACE_LDLIBS) -lm -lstdc++,$(TRACEGEN) $(CUTRACE_BIN) $(WORKLOADS) $(CUTRACE_SO) $(FCDRV_LIB) $(FCRT_LIB)))
