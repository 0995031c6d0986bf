/* long_names: launches a kernel whose name is longer than a trace's string may be (65,535 bytes,
 * FORMAT.md 4.1), as deeply nested C++ templates make them.
 *
 *   long_names [--launches N]
 *
 * The kernel wl_long_kernel<T> (float *) is instantiated with T = wl_pair<U, U>, U itself such a
 * pair, 12 levels deep down to wl_leaf: its mangled name stays short (the repeated argument is
 * a substitution), its demangled name doubles with each level, to 75,794 bytes. N launches of it
 * [3] <<<1, 32>>> and N of the short-named wl_short_kernel (float *), one stream, then one
 * cudaDeviceSynchronize, all from the host function wl_steps<T> (float *, long long), whose
 * demangled name is the kernel's with 5 bytes more, the synchronization through wl_sync<0, 1,
 * ..., 11999>, whose symbol is 84,906 bytes (GCC 13). Prints the kernel's mangled name's length
 * and its demangled name's (what a tracer finding the kernel by its symbol can show), then the
 * counts:
 *
 *   long_names: mangled_bytes=M demangled_bytes=D
 *   long_names: launches=L long=N short=N
 *
 * What a correct trace shows: 2N kernels, N of each name; the long one's name cut to what the
 * format holds and marked with its length, D; the synchronization's call stack through
 * wl_steps<T>, its name cut the same way and marked with D + 5, and wl_sync's, its symbol cut
 * with its length. */
#include <cuda_runtime.h>
#include <cxxabi.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <utility>

#include "wl_common.h"

struct wl_leaf {};
template <class A, class B> struct wl_pair {};
template <int N> struct wl_nest {
    typedef wl_pair<typename wl_nest<N - 1>::type, typename wl_nest<N - 1>::type> type;
};
template <> struct wl_nest<0> {
    typedef wl_leaf type;
};

template <class T> __global__ void wl_long_kernel(float *x)
{
    x[threadIdx.x] += 1.0f;
}

__global__ void wl_short_kernel(float *x)
{
    x[threadIdx.x] *= 2.0f;
}

/* The synchronization, from a function whose symbol is itself over 65,535 bytes: 12,000 template
 * arguments, each its own, leave the mangling nothing to abbreviate (and libstdc++'s demangler
 * gives up on it). */
template <int... I> __attribute__((noinline, noipa)) void wl_sync()
{
    WL_RT(cudaDeviceSynchronize());
}
template <int... I> void wl_sync_of(std::integer_sequence<int, I...>)
{
    wl_sync<I...>();
}

/* The launches and the synchronization, from a host function with the kernel's long name (the
 * tracer records the synchronization's call stack). */
template <class T> __attribute__((noinline)) void wl_steps(float *x, long long n)
{
    for (long long i = 0; i < n; i++) {
        wl_long_kernel<T><<<1, 32>>>(x);
        WL_RT(cudaGetLastError());
        wl_short_kernel<<<1, 32>>>(x);
        WL_RT(cudaGetLastError());
    }
    wl_sync_of(std::make_integer_sequence<int, 12000>());
    WL_RT(cudaGetLastError()); /* not a tail call: this frame stays in the stack */
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"launches", required_argument, NULL, 'n'},
                                             {NULL, 0, NULL, 0}};
    long long n = 3;
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'n')
            n = wl_parse_count("--launches", optarg);
        else
            bad = 1;
    }
    if (bad || optind != argc) {
        fprintf(stderr, "usage: long_names [--launches N]\n");
        return 2;
    }
    void (*longk)(float *) = wl_long_kernel<wl_nest<12>::type>;
    const char *mangled = NULL;
    WL_RT(cudaFuncGetName(&mangled, (const void *)longk));
    int status = -1;
    char *demangled = abi::__cxa_demangle(mangled, NULL, NULL, &status);
    if (status != 0 || !demangled)
        WL_DIE("cannot demangle %s (status %d)", mangled, status);
    printf("long_names: mangled_bytes=%zu demangled_bytes=%zu\n", strlen(mangled),
           strlen(demangled));
    free(demangled);

    float *x;
    WL_RT(cudaMalloc(&x, 32 * sizeof(float)));
    wl_steps<wl_nest<12>::type>(x, n);
    WL_RT(cudaFree(x));
    printf("long_names: launches=%lld long=%lld short=%lld\n", 2 * n, n, n);
    return 0;
}
