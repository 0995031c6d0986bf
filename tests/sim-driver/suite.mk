# The simulated driver's tests. They link libcuda.so.1 directly (as a program built with
# -lcuda does) and export host kernels from the runner (-rdynamic). The nvcc-built images
# are the module test's inputs.
SD_DIR  := tests/sim-driver
sd_comma := ,
SD_OUT  := $(B)/tests/sim-driver
SD_IMGS := $(addprefix $(SD_OUT)/kernels.,sm90.cubin fatbin zstd.fatbin lz4.fatbin)

$(SD_OUT)/kernels.sm90.cubin: $(SD_DIR)/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -cubin -o $@ $<
$(SD_OUT)/kernels.fatbin: $(SD_DIR)/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 \
	  -fatbin -o $@ $<
$(SD_OUT)/kernels.zstd.fatbin: $(SD_DIR)/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -Xfatbin -compress-all -fatbin -o $@ $<
$(SD_OUT)/kernels.lz4.fatbin: $(SD_DIR)/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -Xfatbin -compress-all -compress-mode=speed -fatbin -o $@ $<

$(eval $(call ctt_suite,sim-driver,$(SD_OUT)/sd.o,\
  -L$(FAKECUDA_DIR) -lcuda -Wl$(sd_comma)-rpath$(sd_comma)$(abspath $(FAKECUDA_DIR)) -rdynamic -ldl -lpthread -lm,\
  $(FCDRV_LIB) $(FAKECUDA_DIR)/libcuda.so $(FCDRV_EXPECT) $(SD_IMGS)))

# SD_REPO: the checkout, for files the tests read from it (cuda_api.py, ../shared/reference).
$(SD_OUT)/sd.o $(SD_OUT)/test-%.o: CFLAGS += -Itests/fakecuda -DSD_REPO='"$(abspath .)"'
