# The simulated CUDA runtime, $(FAKECUDA_DIR)/libcudart.so.13 (see tests/fakecuda/runtime/README.md).
# gen.py turns the committed copies of NVIDIA's lists, unsupported.txt, forward.txt and the CUDA
# headers into the driver table, the error table, the stubs of what is not simulated, the plain
# forwarders and the version script.
FCRT_DIR  := tests/fakecuda/runtime
FCRT_GEN  := $(B)/$(FCRT_DIR)/gen
FCRT_HAND := $(FCRT_DIR)/rt_device.c $(FCRT_DIR)/rt_memory.c $(FCRT_DIR)/rt_exec.c $(FCRT_DIR)/rt_graph.c $(FCRT_DIR)/rt_array.c
FCRT_GENC := $(FCRT_GEN)/fc_rt_drv.c $(FCRT_GEN)/fc_rt_stubs.c $(FCRT_GEN)/fc_rt_errors.c $(FCRT_GEN)/fc_rt_forward.c
FCRT_OBJS := $(patsubst %.c,$(B)/%.o,$(FCRT_HAND)) $(FCRT_GENC:.c=.o)
FCRT_LIB  := $(FAKECUDA_DIR)/libcudart.so.13

all: $(FCRT_LIB)

$(FCRT_GEN)/fc_rt_drv.h $(FCRT_GENC) $(FCRT_GEN)/libcudart.map &: $(FCRT_DIR)/gen.py \
    $(FCRT_DIR)/exports.txt $(FCRT_DIR)/getprocaddress.txt $(FCRT_DIR)/unsupported.txt $(FCRT_DIR)/forward.txt $(FCRT_HAND)
	$(PYTHON) $(FCRT_DIR)/gen.py $(CUDA_INC) $(FCRT_GEN) $(FCRT_HAND)

# Hand-written objects include the generated driver table header.
$(patsubst %.c,$(B)/%.o,$(FCRT_HAND)): $(FCRT_GEN)/fc_rt_drv.h
$(FCRT_OBJS): CFLAGS += -fvisibility=hidden -I$(FCRT_DIR) -I$(FCRT_GEN)

$(FCRT_GEN)/%.o: $(FCRT_GEN)/%.c $(FCRT_GEN)/fc_rt_drv.h
	$(CC) $(CFLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@

# --no-undefined-version: every name in the version script (NVIDIA's export list) must exist.
# -Bsymbolic-functions: calls inside the library never go through an export a tracer may
# interpose, so it sees each API call the program makes once.
$(FCRT_LIB): $(FCRT_OBJS) $(FCRT_GEN)/libcudart.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ -Wl,-soname,libcudart.so.13 -Wl,--version-script=$(FCRT_GEN)/libcudart.map \
	  -Wl,--no-undefined-version -Wl,-Bsymbolic-functions -Wl,-z,defs $(FCRT_OBJS) -ldl -lpthread
