# The workloads and the simulated driver and runtime they run on.
$(eval $(call ctt_suite,workloads-run,$(B)/tests/workloads-run/wl_run.o,-lm,$(WORKLOADS) $(FCDRV_LIB) $(FCRT_LIB)))
