# The `cutrace` command: every analyzer/*/*.c, linked with the trace format library. Also built
# with sanitizers ($(B)/asan/bin/cutrace) for the tests that run it under ASan/UBSan.
# The folders follow the pipeline (analyzer/README.md, "Layout"): base (containers, text and
# JSON writing), load, model, features (what plugs into the model), diagnose, output, kineto
# (PyTorch profiler input, converted in front of the model), cli (the commands).
# ANALYZER_OBJS / ANALYZER_ASAN_OBJS: everything but main, for test suites linking the analyzer.
# ANALYZER_INC: the include folders, for the tests that include the analyzer's headers.
ANALYZER_DIRS := base load model features diagnose output kineto cli
ANALYZER_INC := $(addprefix -Ianalyzer/,$(ANALYZER_DIRS))
ANALYZER_MAIN := analyzer/cli/main.c
ANALYZER_SRCS := $(sort $(foreach d,$(ANALYZER_DIRS),$(wildcard analyzer/$(d)/*.c)))
ANALYZER_ASSETS := analyzer/output/cta_html_assets
# analyzer/gen/gen_enums.py writes the names of NVIDIA's enum values (base/cta_enum_names.h)
# from the toolkit's headers into $(B)/analyzer/gen/.
ANALYZER_GEN_C := $(B)/analyzer/gen/cta_enum_names.c
ANALYZER_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out $(ANALYZER_MAIN),$(ANALYZER_SRCS))) \
  $(B)/$(ANALYZER_ASSETS).o $(B)/analyzer/gen/cta_enum_names.o
ANALYZER_ASAN_OBJS := $(patsubst %.c,$(B)/asan/%.o,$(filter-out $(ANALYZER_MAIN),$(ANALYZER_SRCS))) \
  $(B)/asan/$(ANALYZER_ASSETS).o $(B)/asan/analyzer/gen/cta_enum_names.o
CUTRACE_BIN := $(B)/bin/cutrace
CUTRACE_ASAN_BIN := $(B)/asan/bin/cutrace

$(B)/analyzer/%.o $(B)/asan/analyzer/%.o: CFLAGS += $(ANALYZER_INC)

$(ANALYZER_GEN_C): analyzer/gen/gen_enums.py $(CUDA_INC)/driver_types.h $(CUDA_INC)/cuda.h \
                   $(CUDA_INC)/cublas_api.h
	@mkdir -p $(dir $@)
	$(PYTHON) analyzer/gen/gen_enums.py --include $(CUDA_INC) --out $@
$(B)/analyzer/gen/cta_enum_names.o: $(ANALYZER_GEN_C) | $(B)/.deps-ok
	$(CC) $(CFLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@
$(B)/asan/analyzer/gen/cta_enum_names.o: $(ANALYZER_GEN_C) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -MMD -MP -c $< -o $@

# The report page's sources (`cutrace report`), embedded by .incbin: editing one rebuilds both
# binaries. Its script is written in parts (analyzer/output/html/js/, by job), joined in the order
# of their names into the one script the page holds.
ANALYZER_JS := $(sort $(wildcard analyzer/output/html/js/*.js))
ANALYZER_JS_JOINED := $(B)/analyzer/output/html/report.js
$(ANALYZER_JS_JOINED): $(ANALYZER_JS)
	@mkdir -p $(dir $@)
	cat $^ > $@
$(B)/$(ANALYZER_ASSETS).o $(B)/asan/$(ANALYZER_ASSETS).o: $(ANALYZER_ASSETS).S \
    $(wildcard analyzer/output/html/*.html analyzer/output/html/*.css) $(ANALYZER_JS_JOINED) | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) -c -DCTA_HTML_JS='"$(ANALYZER_JS_JOINED)"' $< -o $@

# Built with profile feedback, with its own copy of the format library (analyzer/pgo.mk).
include analyzer/pgo.mk
$(CUTRACE_BIN): $(patsubst %.c,$(B)/%.o,$(ANALYZER_MAIN)) $(ANALYZER_OBJS) $(PGO_TF_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lstdc++ -lm

$(CUTRACE_ASAN_BIN): $(patsubst %.c,$(B)/asan/%.o,$(ANALYZER_MAIN)) $(ANALYZER_ASAN_OBJS) $(CTTRACE_ASAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lstdc++ -lm

all: $(CUTRACE_BIN) $(CUTRACE_ASAN_BIN)
