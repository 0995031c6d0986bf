$(eval $(call ctt_suite,harness,,,))
