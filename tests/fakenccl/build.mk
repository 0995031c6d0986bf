# The simulated NCCL, $(FN_OUT)/libnccl.so.2 (see tests/fakenccl/README.md). gen_nccl.py
# derives from api.txt (2.30.7's functions) and the toolkit's nccl.h the stubs of what is not
# simulated and the host implementations of NVIDIA's kernel names. It calls the driver API, so
# it links the simulated libcuda.so (soname libcuda.so.1: whichever the process has).
FN_DIR  := tests/fakenccl
FN_OUT  := $(B)/tests/fakenccl
FN_GEN  := $(FN_OUT)/gen
FN_HAND := $(addprefix $(FN_DIR)/,fn_core.c fn_comm.c fn_enqueue.c fn_kernel.c fn_reduce.c)
FN_GENC := $(FN_GEN)/fn_stubs.c $(FN_GEN)/fn_kernels.c
FN_OBJS := $(patsubst %.c,$(B)/%.o,$(FN_HAND)) $(FN_GENC:.c=.o)
FN_LIB  := $(FN_OUT)/libnccl.so.2

all: $(FN_LIB) $(FN_OUT)/libnccl.so

$(FN_GENC) &: $(FN_DIR)/gen_nccl.py $(FN_DIR)/api.txt $(CUDA_INC)/nccl.h $(FN_HAND)
	@mkdir -p $(FN_GEN)
	$(PYTHON) $(FN_DIR)/gen_nccl.py $(FN_GEN) $(CUDA_INC)/nccl.h $(FN_DIR)/api.txt $(FN_HAND)

$(FN_OBJS): CFLAGS += -fvisibility=hidden -I$(FN_DIR) -Itests/fakecuda

$(FN_GEN)/%.o: $(FN_GEN)/%.c $(FN_DIR)/fn.h
	$(CC) $(CFLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@

# -Bsymbolic: the library's calls to its own functions never reach a tracer's wrappers.
$(FN_LIB): $(FN_OBJS) $(FCDRV_LIB) $(FAKECUDA_DIR)/libcuda.so
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ -Wl,-soname,libnccl.so.2 -Wl,-Bsymbolic -Wl,-z,defs $(FN_OBJS) \
	  -L$(FAKECUDA_DIR) -lcuda -lpthread -lm -lrt

# For programs linked with -lnccl.
$(FN_OUT)/libnccl.so: $(FN_LIB)
	ln -sf libnccl.so.2 $@
