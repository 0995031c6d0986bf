# libcutrace: the preloaded tracer, $(B)/lib/libcutrace.so (soname libcuda.so.1). Its CUDA entry
# points are generated from NVIDIA's headers by preload/gen/gen_wrappers.py into $(B)/preload/gen/.
CUTRACE_SO := $(B)/lib/libcutrace.so
PRELOAD_GEN := $(B)/preload/gen
PRELOAD_GEN_OUT := $(PRELOAD_GEN)/ctp_fns.h $(PRELOAD_GEN)/ctp_wrappers.c $(PRELOAD_GEN)/ctp_rt_wrappers.c \
                   $(PRELOAD_GEN)/ctp_blas_wrappers.c $(PRELOAD_GEN)/libcutrace.map
PRELOAD_SRCS := $(sort $(wildcard preload/*.c))
PRELOAD_OBJS := $(patsubst %.c,$(B)/%.o,$(PRELOAD_SRCS)) $(PRELOAD_GEN)/ctp_wrappers.o \
                $(PRELOAD_GEN)/ctp_rt_wrappers.o $(PRELOAD_GEN)/ctp_blas_wrappers.o
# Only the CUDA entry points are exported (version script); old ABI variants need the internal
# declarations of cuda.h. -z nodelete: a trace registers an on_exit handler (ctp_session.c), which
# must stay mapped until exit even if a program dlcloses the library.
PRELOAD_CFLAGS := -fvisibility=hidden -D__CUDA_API_VERSION_INTERNAL=1 -Ipreload -I$(PRELOAD_GEN)

$(PRELOAD_GEN_OUT) &: preload/gen/gen_wrappers.py preload/gen/cuda_api.py $(CUDA_INC)/cuda.h \
                      $(CUDA_INC)/cuda_runtime_api.h $(CUDA_INC)/cuda_profiler_api.h \
                      $(CUDA_INC)/cublas_api.h $(CUDA_INC)/cublasLt.h
	@mkdir -p $(PRELOAD_GEN)
	$(PYTHON) preload/gen/gen_wrappers.py --include $(CUDA_INC) --out $(PRELOAD_GEN)

$(patsubst %.c,$(B)/%.o,$(PRELOAD_SRCS)): CFLAGS += $(PRELOAD_CFLAGS)
$(patsubst %.c,$(B)/%.o,$(PRELOAD_SRCS)): $(PRELOAD_GEN)/ctp_fns.h

$(PRELOAD_GEN)/%.o: $(PRELOAD_GEN)/%.c $(PRELOAD_GEN)/ctp_fns.h | $(B)/.deps-ok
	$(CC) $(CFLAGS) $(PRELOAD_CFLAGS) $(PICFLAGS) -Wno-unused-parameter -MMD -MP -c $< -o $@

# What libcutrace links (tests/race's ThreadSanitizer build too): libunwind's local unwinder for
# the stacks at calls, its remote one (-lunwind-x86_64) for the perf_event stack copies.
PRELOAD_LDLIBS := -lunwind -lunwind-x86_64 -ldl -lpthread

$(CUTRACE_SO): $(PRELOAD_OBJS) $(CTTRACE_LIB) $(PRELOAD_GEN)/libcutrace.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(PRELOAD_GEN)/libcutrace.map \
	  -Wl,-z,now -Wl,-z,nodelete -Wl,--no-undefined $(PRELOAD_OBJS) $(CTTRACE_LIB) $(CTTRACE_LDLIBS) $(PRELOAD_LDLIBS)

all: $(CUTRACE_SO)
