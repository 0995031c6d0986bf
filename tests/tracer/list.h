/* The tracer's suite: workloads run under `cutrace run` on the simulated CUDA stack, checked
 * against what each workload states it does. */
TEST_ENTRY(route_dt_needed)
TEST_ENTRY(route_dlopen)
TEST_ENTRY(route_getprocaddress)
TEST_ENTRY(route_entry_point)
TEST_ENTRY(train_loop_pageable)
TEST_ENTRY(train_loop_pinned)
