$(eval $(call ct_test_suite,harness,,,))
