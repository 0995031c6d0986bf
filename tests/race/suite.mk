# The tracer under a race detector (tests/race): libcutrace and the format library built with
# -fsanitize=thread into $(B)/tsan/lib/libcutrace.so, preloaded after gcc's libtsan into the
# threaded workloads through `cutrace run` (CUTRACE_LIB). A ThreadSanitizer report fails the test.
# At SAN_OPT's -O1 as the other sanitizer builds: the generated wrappers took 14 s each at -O2.
RACE_B := $(B)/tsan
RACE_SO := $(RACE_B)/lib/libcutrace.so
RACE_LIBTSAN := $(shell $(CC) -print-file-name=libtsan.so.2)
RACE_OBJS := $(patsubst %.c,$(RACE_B)/%.o,$(PRELOAD_SRCS) $(PRELOAD_GEN)/ctp_wrappers.c \
               $(PRELOAD_GEN)/ctp_rt_wrappers.c $(CTTRACE_SRCS))

$(RACE_B)/%.o: %.c | $(B)/.deps-ok $(PRELOAD_GEN)/ctp_fns.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PRELOAD_CFLAGS) -Wno-unused-parameter -Wno-tsan $(SAN_OPT) -fsanitize=thread -fPIC -MMD -MP -c $< -o $@

$(RACE_SO): $(RACE_OBJS) $(PRELOAD_GEN)/libcutrace.map
	@mkdir -p $(dir $@)
	$(CC) -shared -fsanitize=thread -o $@ -Wl,-soname,libcuda.so.1 \
	  -Wl,--version-script=$(PRELOAD_GEN)/libcutrace.map $(RACE_OBJS) $(CTTRACE_LDLIBS) $(PRELOAD_LDLIBS)

all: $(RACE_SO)

$(B)/tests/race/%.o: CFLAGS += -Itests/tracer -Itests/faults -DRACE_LIBTSAN='"$(RACE_LIBTSAN)"' -DRACE_SRC='"$(CURDIR)/tests/race"'
$(eval $(call ctt_suite,race,$(B)/tests/faults/fl.o $(B)/tests/tracer/tr.o $(CTTRACE_LIB),$(CTTRACE_LDLIBS),\
  $(RACE_SO) $(CUTRACE_BIN) $(FAKECUDA_DIR)/libcudart.so.13 $(FAKECUDA_DIR)/libcuda.so.1 \
  $(B)/tests/faults/victim $(B)/tests/tracer/probe $(WORKLOADS)))
