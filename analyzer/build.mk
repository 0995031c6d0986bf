# The `cutrace` command: every analyzer/*.c, linked with the trace format library. Also built
# with sanitizers ($(B)/asan/bin/cutrace) for the tests that run it under ASan/UBSan.
# ANALYZER_OBJS / ANALYZER_ASAN_OBJS: everything but main, for test suites linking the analyzer.
ANALYZER_SRCS := $(sort $(wildcard analyzer/*.c))
ANALYZER_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out analyzer/main.c,$(ANALYZER_SRCS))) \
  $(B)/analyzer/cta_html_assets.o
ANALYZER_ASAN_OBJS := $(patsubst %.c,$(B)/asan/%.o,$(filter-out analyzer/main.c,$(ANALYZER_SRCS))) \
  $(B)/asan/analyzer/cta_html_assets.o
CUTRACE_BIN := $(B)/bin/cutrace
CUTRACE_ASAN_BIN := $(B)/asan/bin/cutrace

$(B)/analyzer/%.o $(B)/asan/analyzer/%.o: CFLAGS += -Ianalyzer

# The report page's sources (`cutrace report`), embedded by .incbin: editing one rebuilds both
# binaries.
$(B)/analyzer/cta_html_assets.o $(B)/asan/analyzer/cta_html_assets.o: analyzer/cta_html_assets.S \
    $(wildcard analyzer/html/*) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(CUTRACE_BIN): $(B)/analyzer/main.o $(ANALYZER_OBJS) $(CTTRACE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lstdc++ -lm

$(CUTRACE_ASAN_BIN): $(B)/asan/analyzer/main.o $(ANALYZER_ASAN_OBJS) $(CTTRACE_ASAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lstdc++ -lm

all: $(CUTRACE_BIN) $(CUTRACE_ASAN_BIN)
