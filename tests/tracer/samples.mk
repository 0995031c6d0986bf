# Builds the cuda-samples of Samples/0_Introduction that the tracer suite runs (intro[]), at
# test time: test-samples.c runs `make -f tests/tracer/samples.mk -j2 OUT=... SAMPLES=... NVCC=...`
# once for all of them (then once per sample, finding it up to date), so nvcc runs only when a
# source changed and two builds at a time; samples_cache.sh restores an earlier clone's build. Each sample NAME becomes OUT/NAME/NAME; the driver API
# samples' kernels become the fatbin the program loads from its working directory
# (OUT/NAME/KERNEL64.fatbin); the NVRTC samples compile their kernel source at run time.
# Flags are the samples' own (their Makefiles' defaults) but for -cudart shared, which puts the
# simulated runtime (or NVIDIA's) under them.
SRC = $(SAMPLES)/Samples/0_Introduction
ARCH := -arch=sm_90
NVFLAGS = -cudart shared $(ARCH) -I$(SAMPLES)/Common

# Runtime API programs: every .cu and .cpp of the sample's directory.
RT := asyncAPI clock fp16ScalarProduct matrixMul mergeSort simpleAWBarrier simpleAssert \
  simpleAtomicIntrinsics simpleAttributes simpleCallback simpleCooperativeGroups \
  simpleCubemapTexture simpleHyperQ simpleLayeredTexture simpleMultiCopy simpleMultiGPU \
  simpleOccupancy simplePitchLinearTexture simplePrintf simpleStreams simpleSurfaceWrite \
  simpleTemplates simpleTexture simpleVoteIntrinsics simpleZeroCopy systemWideAtomics template \
  vectorAdd
# Driver API programs: host .cpp files, kernel NAME_kernel.cu as a fatbin beside the program.
DRV := matrixMulDrv simpleDrvRuntime simpleTextureDrv vectorAddDrv vectorAddMMAP
NVRTC := clock_nvrtc matrixMul_nvrtc simpleAssert_nvrtc simpleAtomicIntrinsics_nvrtc vectorAdd_nvrtc
ALL := $(RT) $(DRV) $(NVRTC) matrixMulDynlinkJIT cudaOpenMP

# half: half of the runtime API programs, about half of the work (test-samples.c builds them in
# one test and the rest in another, each well within a test's time limit on a busy machine).
.PHONY: all half $(ALL)
all: $(ALL)
half: $(wordlist 1,14,$(RT))
$(foreach s,$(ALL),$(eval $(s): $(OUT)/$(s)/$(s)))

srcs = $(wildcard $(SRC)/$(1)/*.cu $(SRC)/$(1)/*.cpp $(SRC)/$(1)/*.c)
deps = $(wildcard $(SRC)/$(1)/*) $(lastword $(MAKEFILE_LIST))

define rt_rule
$(OUT)/$(1)/$(1): $(call deps,$(1))
	@mkdir -p $$(dir $$@)
	$(NVCC) $(NVFLAGS) $(2) -o $$@ $(call srcs,$(1)) $(3)
endef
$(foreach s,$(RT),$(eval $(call rt_rule,$(s))))
$(eval $(call rt_rule,cudaOpenMP,-Xcompiler -fopenmp))
$(eval $(call rt_rule,matrixMulDynlinkJIT,,-ldl))

define drv_rule
$(OUT)/$(1)/$(1): $(call deps,$(1))
	@mkdir -p $$(dir $$@)
	$(NVCC) $(ARCH) -fatbin -o $(OUT)/$(1)/$(notdir $(basename $(wildcard $(SRC)/$(1)/*_kernel.cu)))64.fatbin $(wildcard $(SRC)/$(1)/*_kernel.cu)
	$(NVCC) $(NVFLAGS) -o $$@ $(wildcard $(SRC)/$(1)/*.cpp) -lcuda
endef
$(foreach s,$(DRV),$(eval $(call drv_rule,$(s))))

define nvrtc_rule
$(OUT)/$(1)/$(1): $(call deps,$(1))
	@mkdir -p $$(dir $$@)
	$(NVCC) $(NVFLAGS) -o $$@ $(wildcard $(SRC)/$(1)/*.cpp) -lnvrtc -lcuda
endef
$(foreach s,$(NVRTC),$(eval $(call nvrtc_rule,$(s))))
