# Unmodified PyTorch (PyPI's torch, with NVIDIA's own runtime, cuBLAS and cuDNN from its wheels)
# and a cuda-python driver-API program, traced by cutrace on the simulated driver. PyTorch loads
# NVIDIA's runtime from its nvidia/cu13/lib through DT_RPATH; only libcuda.so.1 is swapped, by
# LD_LIBRARY_PATH naming $(NV_DRV_DIR) (tests/nvrt/suite.mk), which holds the simulated driver
# alone. The virtual environment lives outside the clone (PT_VENV); tests/pytorch/venv.sh makes
# sure it exists before the suite runs, every time (a check of its imports when it does).
PT_VENV   ?= $(HOME)/.cache/cutrace/venv
PT_STATUS := $(B)/tests/pytorch/venv.status

.PHONY: pytorch-venv
pytorch-venv:
	@bash tests/pytorch/venv.sh $(PT_VENV) tests/pytorch/requirements.txt $(PT_STATUS) \
	  'torch, numpy, cuda.bindings.driver, torchvision'

# test-thread_samples reads the trace's records with the tracer suite's reader (tests/tracer/tr.h);
# test-training the simulation's truth with its reader (tests/tracer/gr_truth.h).
$(eval $(call ctt_suite,pytorch,$(B)/tests/pytorch/pt.o $(B)/tests/analyzer/an_helpers.o \
  $(B)/tests/analyzer/tjson.o $(B)/tests/tracer/tr.o $(B)/tests/tracer/gr_truth.o $(CTTRACE_LIB),-lm $(CTTRACE_LDLIBS),\
  pytorch-venv $(NV_DRV_DIR)/libcuda.so.1 $(FCDRV_LIB) $(CUTRACE_BIN) $(CUTRACE_SO)))

$(B)/tests/pytorch/%.o: CFLAGS += -Itests/analyzer -Itests/tracer -DPT_SRC='"$(CURDIR)/tests/pytorch"' \
  -DPT_STATUS='"$(abspath $(PT_STATUS))"'
