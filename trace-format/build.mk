# The trace format library: one static archive used by the tracer, the analyzer and the tests,
# and the same sources built with sanitizers for the sanitizer test suites.
#   $(CTTRACE_LIB)       PIC objects (links into the preloaded .so as well as programs)
#   $(CTTRACE_ASAN_LIB)  -fsanitize=address,undefined objects
#   $(CTTRACE_LDLIBS)    what a program linking either archive also needs
CTTRACE_SRCS := $(sort $(wildcard trace-format/*.c))
CTTRACE_LIB := $(B)/trace-format/libcttrace.a
CTTRACE_ASAN_LIB := $(B)/asan/trace-format/libcttrace.a
CTTRACE_LDLIBS := -lzstd

$(CTTRACE_LIB): $(patsubst %.c,$(B)/%.o,$(CTTRACE_SRCS))
	@rm -f $@
	ar rcs $@ $^

$(CTTRACE_ASAN_LIB): $(patsubst %.c,$(B)/asan/%.o,$(CTTRACE_SRCS))
	@rm -f $@
	ar rcs $@ $^

all: $(CTTRACE_LIB) $(CTTRACE_ASAN_LIB)
