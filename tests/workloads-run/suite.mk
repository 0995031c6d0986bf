$(eval $(call ct_test_suite,workloads-run,$(B)/tests/workloads-run/wl_run.o,-lm,$(WORKLOADS)))
