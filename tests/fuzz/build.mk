# make fuzz: libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined) over the trace
# reader (fuzz_reader) and every cutrace command that parses a trace (fuzz_cli), seeded with
# real traces of the workloads (tests/fuzz/seeds.sh), each run for FUZZ_SECONDS. Corpora grow in
# $(B)/fuzz/corpus-*; a crash stops the target, lands in $(B)/fuzz/crashes/ and fails make fuzz;
# copy it into tests/robust/regress/ so `make test` replays it (tests/robust/test-regress.c).
FUZZ_B       := $(B)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_FLAGS   ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -g -O1 -std=gnu11 $(WARN) -fno-strict-aliasing -I$(CUDA_INC) -Itrace-format \
                $(ANALYZER_INC) -Itests/fuzz -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(CTTRACE_SRCS) tests/fuzz/fz.c)
# (the report page's sources are data: the plain build's object serves, analyzer/build.mk)
FUZZ_CLI_OBJS := $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(ANALYZER_SRCS)) $(B)/$(ANALYZER_ASSETS).o

# clang and libFuzzer's runtime (Debian's clang and libclang-rt-*-dev): installed when missing
# and root.
$(FUZZ_B)/.clang-ok:
	@mkdir -p $(dir $@)
	@if ! command -v $(FUZZ_CC) >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing clang (libFuzzer)"; apt-get install -y -qq clang >/dev/null || exit 1; \
	  else \
	    echo "error: $(FUZZ_CC) not found; run: sudo apt-get install -y clang" >&2; exit 1; \
	  fi; \
	fi
	@echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
	  > $(FUZZ_B)/probe.c
	@if ! $(FUZZ_CC) -fsanitize=fuzzer -o $(FUZZ_B)/probe $(FUZZ_B)/probe.c 2>/dev/null; then \
	  v=$$($(FUZZ_CC) -dumpversion | cut -d. -f1); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing libclang-rt-$$v-dev (libFuzzer)"; \
	    apt-get install -y -qq libclang-rt-$$v-dev >/dev/null || exit 1; \
	  else \
	    echo "error: $(FUZZ_CC) cannot link libFuzzer; run: sudo apt-get install -y clang libclang-rt-$$v-dev" >&2; \
	    exit 1; \
	  fi; \
	fi
	@touch $@

$(FUZZ_B)/obj/%.o: %.c | $(B)/.deps-ok $(FUZZ_B)/.clang-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

# The analyzer's main() becomes a function the target calls with each command line.
$(FUZZ_B)/obj/$(ANALYZER_MAIN:.c=.o): FUZZ_CFLAGS += -Dmain=cta_main

$(FUZZ_B)/fuzz_reader: $(FUZZ_B)/obj/tests/fuzz/fuzz_reader.o $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(CTTRACE_LDLIBS)

$(FUZZ_B)/fuzz_cli: $(FUZZ_B)/obj/tests/fuzz/fuzz_cli.o $(FUZZ_CLI_OBJS) $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lm

# it converts each input into a cutrace trace and models it as well: the whole analyzer
$(FUZZ_B)/fuzz_kineto: $(FUZZ_B)/obj/tests/fuzz/fuzz_kineto.o $(FUZZ_CLI_OBJS) $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(CTTRACE_LDLIBS) -lsqlite3 -lz -lm

# fuzz_kineto's seeds: the Kineto traces of HTA's tests (../shared, when present), decompressed
# and cut to the fuzzer's length limit, the documents of tests/fuzz/kineto-seeds/ (among them
# Chrome's array form, closed and not, a byte-order mark, events dropped for each reason, `{}`
# and `null`), and two of them as gzip inside gzip.
$(FUZZ_B)/seeds-kineto/.done: $(wildcard tests/fuzz/kineto-seeds/*)
	@mkdir -p $(dir $@)
	@cp tests/fuzz/kineto-seeds/* $(dir $@)
	@gzip -c tests/fuzz/kineto-seeds/bom.json | gzip -c > $(dir $@)/bom-nested.json.gz
	@gzip -c tests/fuzz/kineto-seeds/dropped.json | gzip -c | gzip -c > $(dir $@)/dropped-nested3.json.gz
	@for f in $(wildcard ../shared/data/kineto-hta/*.json.gz); do \
	  zcat "$$f" | head -c 200000 > $(dir $@)/$$(basename "$$f" .json.gz).json; done
	@touch $@

$(FUZZ_B)/rawify: $(B)/tests/fuzz/rawify.o $(B)/tests/fuzz/fz.o $(CTTRACE_LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(CTTRACE_LDLIBS)

$(B)/tests/fuzz/%.o $(B)/asan/tests/fuzz/%.o: CFLAGS += -Itests/fuzz

FUZZ_SEED_PREREQS := $(FUZZ_B)/rawify $(CUTRACE_BIN) $(CUTRACE_SO) $(WORKLOADS) $(B)/tests/analyzer/tracegen \
                     $(FAKECUDA_DIR)/libcuda.so.1 $(FAKECUDA_DIR)/libcudart.so.13

# One core, FUZZ_SECONDS per target; FUZZ_FLAGS adds libFuzzer flags (e.g. -jobs=2).
fuzz: $(FUZZ_B)/fuzz_reader $(FUZZ_B)/fuzz_cli $(FUZZ_B)/fuzz_kineto $(FUZZ_B)/seeds-kineto/.done \
    $(FUZZ_SEED_PREREQS)
	@bash tests/fuzz/seeds.sh $(abspath $(B)) $(abspath $(FUZZ_B))/seeds
	@mkdir -p $(FUZZ_B)/crashes
	@status=0; for t in reader cli kineto; do \
	  mkdir -p $(FUZZ_B)/corpus-$$t; \
	  seeds=$(FUZZ_B)/seeds; [ $$t = kineto ] && seeds=$(FUZZ_B)/seeds-kineto; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s (log: $(FUZZ_B)/fuzz_$$t.log)"; \
	  $(FUZZ_B)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -rss_limit_mb=2048 \
	    -timeout=30 -close_fd_mask=3 -print_final_stats=1 \
	    -artifact_prefix=$(abspath $(FUZZ_B))/crashes/$$t- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-$$t $$seeds > $(FUZZ_B)/fuzz_$$t.log 2>&1 || status=1; \
	  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)|ERROR|SUMMARY' \
	    $(FUZZ_B)/fuzz_$$t.log | sed "s/^/  /"; \
	done; \
	if [ $$status != 0 ]; then \
	  echo "fuzz: crashes in $(FUZZ_B)/crashes/ (copy them into tests/robust/regress/)"; ls $(FUZZ_B)/crashes; \
	fi; exit $$status
