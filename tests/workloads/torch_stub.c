/* Built as $(B)/tests/workloads/torch/libtorch_cuda.so: a stand-in that carries only PyTorch's
 * CUDA library's file name, so that a workload which dlopens it (train_loop --dlopen) looks to
 * the tracer like a process with PyTorch loaded (preload/ctp_frameworks.c). */
int cutrace_torch_stub(void);
int cutrace_torch_stub(void) { return 0; }
