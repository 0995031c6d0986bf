/* The tracer's suite: workloads run under `cutrace run` on the simulated CUDA stack, checked
 * against what each workload states it does. */
TEST_ENTRY(train_loop_pageable)
TEST_ENTRY(train_loop_pinned)
