# The simulated CUDA driver, $(FAKECUDA_DIR)/libcuda.so.1 (see tests/fakecuda/driver/README.md).
# gen_driver.py derives from the CUDA headers (through preload/gen/cuda_api.py) the weak
# NOT_SUPPORTED stub of every driver symbol, the cuGetProcAddress table, the CUresult names,
# and the expected resolution of NVIDIA's reference request list for the sim-driver tests.
FCDRV_DIR  := tests/fakecuda/driver
FCDRV_GEN  := $(B)/$(FCDRV_DIR)/gen
FCDRV_HAND := $(addprefix $(FCDRV_DIR)/,fc_core.c fc_ctx.c fc_devices.c fc_mem.c fc_pool.c fc_vmm.c fc_exec.c fc_stream.c fc_event.c fc_copy.c fc_module.c fc_image.c fc_launch.c fc_misc.c fc_graph.c fc_gnode.c fc_gexec.c fc_export.c fc_integrity.c fc_report.c fc_link.c fc_array.c)
FCDRV_GENC := $(FCDRV_GEN)/fc_stubs.c $(FCDRV_GEN)/fc_procs.c $(FCDRV_GEN)/fc_errors.c
FCDRV_OBJS := $(patsubst %.c,$(B)/%.o,$(FCDRV_HAND)) $(FCDRV_GENC:.c=.o)
FCDRV_LIB  := $(FAKECUDA_DIR)/libcuda.so.1
FCDRV_REF  := $(wildcard ../shared/reference/cudart-13.0-getprocaddress.txt)
# What the reference requests resolve to by cuda_api.py's rule (empty if the list is absent;
# the test then reports that).
FCDRV_EXPECT := $(FCDRV_GEN)/fc_expect.txt

all: $(FCDRV_LIB) $(FAKECUDA_DIR)/libcuda.so

$(FCDRV_GENC) $(FCDRV_EXPECT) &: $(FCDRV_DIR)/gen_driver.py preload/gen/cuda_api.py \
    $(CUDA_INC)/cuda.h $(CUDA_INC)/cudaTypedefs.h $(FCDRV_REF)
	@mkdir -p $(FCDRV_GEN)
	$(PYTHON) $(FCDRV_DIR)/gen_driver.py $(FCDRV_GEN) $(CUDA_INC) $(FCDRV_REF)
	@touch $(FCDRV_EXPECT)

$(FCDRV_OBJS): CFLAGS += -fvisibility=hidden -I$(FCDRV_DIR) -Itests/fakecuda

$(FCDRV_GEN)/%.o: $(FCDRV_GEN)/%.c $(FCDRV_DIR)/fc.h $(FCDRV_DIR)/fc_procs.h
	$(CC) $(CFLAGS) $(PICFLAGS) -MMD -MP -c $< -o $@

# -Bsymbolic: the cuGetProcAddress table and every internal reference bind to the driver's own
# definitions, as in NVIDIA's libcuda, not to an interposer that preloads the same names.
$(FCDRV_LIB): $(FCDRV_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -Wl,-z,defs $(FCDRV_OBJS) \
	  -lzstd -ldl -lpthread -lm

# For programs linked with -lcuda.
$(FAKECUDA_DIR)/libcuda.so: $(FCDRV_LIB)
	ln -sf libcuda.so.1 $@
