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

#include <stddef.h>

typedef struct {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    /* When the kernel starts on the simulated device (CLOCK_MONOTONIC, ns; the call's time in
     * instant mode), and its end: the model's when the host implementation is called. A kernel
     * whose duration depends on other devices (the simulated NCCL's collectives end only once
     * every rank has launched its part) sets *end_ns, no earlier than start_ns; the stream,
     * events and FAKECUDA_TRUTH then take that end. Instant mode ignores it. */
    long long start_ns;
    long long *end_ns;
} fakecuda_launch;

/* kernel_params is the launch's kernelParams array (NULL if the launch used `extra`). */
typedef void (*fakecuda_host_kernel)(void **kernel_params, const fakecuda_launch *launch);

#define FAKECUDA_HOST_KERNEL_PREFIX "fakecuda_kernel_"

/* cudaGraphSetConditional for host kernels: sets a graph conditional handle's value (the
 * handle from cuGraphConditionalHandleCreate, passed to the kernel as an argument, as CUDA's
 * device code receives it). Exported by the simulated libcuda.so.1; an invalid handle aborts. */
void fakecuda_graph_set_conditional(unsigned long long handle, unsigned int value);

/* Textures and surfaces for host kernels (exported by the simulated libcuda.so.1; an invalid
 * handle or a surface access out of bounds aborts, naming it). CUtexObject / cudaTextureObject_t
 * and the surface handles are passed as unsigned long long.
 *
 * fakecuda_tex_fetch samples a texture object as device code does: x, y, z are its coordinates
 * (tex1D/tex2D/tex3D; tex1Dfetch: x is the element index of a linear resource, never filtered);
 * on a layered array z is the layer (tex1DLayered/tex2DLayered), on a cubemap `face` is the
 * face (0..5, +x -x +y -y +z -z) and z the cubemap layer. It honours the texture descriptor's
 * normalized coordinates, address modes (wrap and mirror on normalized coordinates only, as
 * CUDA; clamp; border with the border colour), point and linear filtering (weights in 9-bit fixed
 * point with 8 fraction bits, as the hardware) and read mode (8- and 16-bit integers normalized
 * to [0,1] or [-1,1] unless CU_TRSF_READ_AS_INTEGER; half and float as values; channels beyond
 * the format's read as 0). Integer reads come back as float values (exact up to 2^24).
 * fakecuda_tex_fetch_row is count fetches along a row (x[i], y, z), out[i] each, as count calls
 * of fakecuda_tex_fetch would give them: a host kernel's inner loop without the per-call look-up
 * of the texture (a 2048x2048 texture fetched 200 times took 40 s one call a texel).
 * fakecuda_tex_cubemap is texCubemap/texCubemapLayered: (x, y, z) a direction, the face chosen
 * and projected by the CUDA Programming Guide's cubemap table.
 * fakecuda_surf_ptr is surf1D/2D/3D/LayeredRead and Write's address: x in bytes, y the row,
 * layer the slice (layer or depth) of a surface object's array. */
typedef struct {
    float x, y, z, w;
} fakecuda_float4;
fakecuda_float4 fakecuda_tex_fetch(unsigned long long tex, float x, float y, float z, int face);
void fakecuda_tex_fetch_row(unsigned long long tex, size_t count, const float *x, float y, float z,
                            int face, fakecuda_float4 *out);
fakecuda_float4 fakecuda_tex_cubemap(unsigned long long tex, float x, float y, float z, int layer);
void *fakecuda_surf_ptr(unsigned long long surf, long x_bytes, long y, long layer);

/* The same four for a FAKECUDA_HOST_KERNELS library, which cannot link them: under a tracer,
 * "libcuda.so.1" names the tracer's library, not the simulation's. Such a library defines
 *     fakecuda_texture_api fakecuda_textures;
 * and the driver fills it in when it loads the library, before any kernel runs. */
typedef struct {
    fakecuda_float4 (*tex_fetch)(unsigned long long tex, float x, float y, float z, int face);
    fakecuda_float4 (*tex_cubemap)(unsigned long long tex, float x, float y, float z, int layer);
    void *(*surf_ptr)(unsigned long long surf, long x_bytes, long y, long layer);
    void (*tex_fetch_row)(unsigned long long tex, size_t count, const float *x, float y, float z,
                          int face, fakecuda_float4 *out);
} fakecuda_texture_api;
#define FAKECUDA_TEXTURE_API_SYMBOL "fakecuda_textures"

#endif
