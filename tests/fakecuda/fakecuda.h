/* What a test or workload may know about the simulated CUDA (tests/fakecuda). Nothing here is
 * seen by the tracer, which is built only against NVIDIA's headers.
 *
 * Host implementations of kernels. The simulation runs no device code; to make a program's
 * results checkable, a kernel may be given a host implementation. Set FAKECUDA_HOST_KERNELS to a
 * colon-separated list of shared objects; the driver dlopens them and, for a kernel whose
 * (mangled) name is NAME, looks up the symbol "fakecuda_kernel_" NAME (mangled C++ names are
 * valid C identifiers) in them, then in the global scope. When that kernel's launch reaches the
 * head of its stream, the driver calls it with the launch's parameters, in the stream's order,
 * on a simulation thread. Device memory is host-addressable in the simulation, so the function
 * reads and writes device pointers directly. The parameters are their values at launch time: the
 * driver copies them then, as a GPU does, using the layout the module image gives
 * (tests/fakecuda/driver/README.md). */
#ifndef FAKECUDA_H
#define FAKECUDA_H

typedef struct {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
} fakecuda_launch;

/* kernel_params is the launch's kernelParams array (NULL if the launch used `extra`). */
typedef void (*fakecuda_host_kernel)(void **kernel_params, const fakecuda_launch *launch);

#define FAKECUDA_HOST_KERNEL_PREFIX "fakecuda_kernel_"

/* cudaGraphSetConditional for host kernels: sets a graph conditional handle's value (the
 * handle from cuGraphConditionalHandleCreate, passed to the kernel as an argument, as CUDA's
 * device code receives it). Exported by the simulated libcuda.so.1; an invalid handle aborts. */
void fakecuda_graph_set_conditional(unsigned long long handle, unsigned int value);

#endif
