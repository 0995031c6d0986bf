# The analyzer is built with profile feedback (GCC's -fprofile-generate, then -fprofile-use).
# Why: its per-record loop (the reader's decoding, the model's joins and sweep, the features'
# hooks) is larger than the 32 KiB instruction cache, and its cold paths sit among the hot ones.
# Summary of make bench's 64 ranks (cachegrind): 58899c6 missed the cache 89 million times in
# 14.5 G instructions; the model split into files with its features, 150 million in 15.2 G, and
# took 9% more CPU with two workers; built with feedback, 99 million in 14.2 G, and make bench
# section 10 measured 0.81 to 0.90 of 58899c6's CPU time. Marking hot functions by hand took the
# misses to 133 million only.
#
# How: the analyzer's sources and the format library's are compiled instrumented into
# $(PGO)/gen, linked, and run on tracegen's traces (a training loop, 16 ranks: summary with one
# and two workers, the timeline), which writes the counts into $(PGO)/data; the analyzer's
# objects ($(B)/analyzer/..., which the tests link too) and its own copy of the format library
# ($(PGO)/use/trace-format/...: the tracer and tracegen keep the plain archive) are then
# compiled with them. The objects' paths differ between the two builds, and GCC names a
# source's counts, and its static functions' ids, after the object's auxiliary name: both builds
# give the same one (-dumpdir, -dumpbase: without, every static function's counts were "not
# found"). Code the training does not reach is optimized as without feedback
# (-fprofile-partial-training). Editing a source trains again. The sanitizer build has none.
PGO := $(B)/pgo
PGO_DATA := $(abspath $(PGO)/data)
PGO_SRCS := $(ANALYZER_SRCS) $(CTTRACE_SRCS)
PGO_GEN_OBJS := $(patsubst %.c,$(PGO)/gen/%.o,$(PGO_SRCS))
PGO_AUX = -dumpdir $(PGO)/aux/$(dir $<) -dumpbase $(basename $(notdir $<))
PGO_GEN_FLAGS = -fprofile-generate=$(PGO_DATA) -fprofile-update=atomic $(PGO_AUX)
PGO_USE_FLAGS = -fprofile-use=$(PGO_DATA) -fprofile-partial-training -Wno-missing-profile $(PGO_AUX)
PGO_TF_OBJS := $(patsubst %.c,$(PGO)/use/%.o,$(CTTRACE_SRCS))
PGO_TRAIN := $(PGO)/train

$(PGO)/gen/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@) $(PGO)/aux/$(dir $<)
	$(CC) $(CFLAGS) $(ANALYZER_INC) $(PICFLAGS) $(PGO_GEN_FLAGS) -MMD -MP -c $< -o $@

$(PGO)/gen/bin/cutrace: $(PGO_GEN_OBJS) $(B)/$(ANALYZER_ASSETS).o $(B)/analyzer/gen/cta_enum_names.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fprofile-generate -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lstdc++ -lm

# tracegen is the tests' (tests/analyzer/suite.mk), built with the plain format library.
$(PGO)/trained: $(PGO)/gen/bin/cutrace $(B)/tests/analyzer/tracegen
	rm -rf $(PGO_DATA) $(PGO_TRAIN)
	mkdir -p $(PGO_TRAIN)/loop $(PGO_TRAIN)/ranks
	$(B)/tests/analyzer/tracegen -o $(PGO_TRAIN)/loop --events 1000000 --workers 4 --kernels 40 \
	  --churn --prefetch --pinned >/dev/null
	$(B)/tests/analyzer/tracegen -o $(PGO_TRAIN)/ranks --ranks 16 --iters 300 --kernels 8 --churn >/dev/null
	$< summary -j 1 $(PGO_TRAIN)/loop/rank-0.cutrace >/dev/null
	$< summary -j 2 --json $(PGO_TRAIN)/ranks >/dev/null
	$< timeline --max-events 0 -o /dev/null $(PGO_TRAIN)/loop/rank-0.cutrace
	rm -rf $(PGO_TRAIN)
	touch $@

# private: a target's variables would reach its prerequisites' recipes, the training's among them
$(patsubst %.c,$(B)/%.o,$(ANALYZER_SRCS)): $(PGO)/trained
$(patsubst %.c,$(B)/%.o,$(ANALYZER_SRCS)): private CFLAGS += $(PGO_USE_FLAGS)

$(PGO)/use/%.o: %.c $(PGO)/trained | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PGO_USE_FLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@
