/* Unmodified PyTorch and a cuda-python driver-API program on the simulated driver, traced. */
TEST_ENTRY(pytorch_starved_loop)
TEST_ENTRY(pytorch_fed_loop)
TEST_ENTRY(pytorch_oom)
TEST_ENTRY(cuda_python_ptx)
TEST_ENTRY(pytorch_advice_names_the_line)
TEST_ENTRY(pytorch_stacks_reach_the_script)
TEST_ENTRY(pytorch_nvtx_ranges)
TEST_ENTRY(pytorch_autograd_thread_exits)
