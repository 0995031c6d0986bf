/* The differential suite: cutrace summary against the reference model (refmodel.h). */
TEST_ENTRY(recorded_python_trace)
TEST_ENTRY(tracegen_regimes)
TEST_ENTRY(random_shapes)
TEST_ENTRY(damaged_traces)
TEST_ENTRY(workloads_traced)
TEST_ENTRY(planted_bug_is_detected)
TEST_ENTRY(python_ctypes_workload)
TEST_ENTRY(quiet_then_overlapping_threads)
