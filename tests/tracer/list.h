/* The tracer's suite: workloads run under `cutrace run` on the simulated CUDA stack, checked
 * against what each workload states it does. */
TEST_ENTRY(route_dt_needed)
TEST_ENTRY(route_dlopen)
TEST_ENTRY(route_getprocaddress)
TEST_ENTRY(route_entry_point)
TEST_ENTRY(train_loop_pageable)
TEST_ENTRY(train_loop_pinned)
TEST_ENTRY(vram_peak_and_oom)
TEST_ENTRY(errno_preserved)
TEST_ENTRY(no_cuda_no_file)
TEST_ENTRY(unwritable_dir_runs_untraced)
TEST_ENTRY(stress_64_threads_lose_nothing)
TEST_ENTRY(threads_named_with_own_streams)
