/* The tracer's threaded paths under ThreadSanitizer (see test-race.c). */
TEST_ENTRY(threads_workload_no_races)
TEST_ENTRY(stress_threads_no_races)
