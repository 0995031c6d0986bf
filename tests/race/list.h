/* The tracer's threaded paths under ThreadSanitizer (see test-race.c). */
TEST_ENTRY(threads_workload_no_races)
/* Failing, not run until libcutrace is fixed:
 *   stress_threads_no_races: data races between ct_rmap_add and ct_rmap_find (preload/ct_maps.c,
 *     a seqlock whose readers read entries the writer memmoves) */
