#!/usr/bin/env python3.11
"""py_sites: a Python training loop on the CUDA driver through ctypes, whose CUDA calls are made
on lines marked `# cutrace: <what>`: the tests read the markers to know which file:line each
diagnosis must name (issue 14).

    py_sites [--steps N] [--thread] [--fork] [--callback]

cuInit; cuDeviceGet(0); cuDevicePrimaryCtxRetain + cuCtxSetCurrent; cuMemAlloc of 1 MiB; then N
[10] steps, each a cuMemcpyHtoD of 1 MiB from pageable memory (marker pageable-copy) and a
cuCtxSynchronize (marker step-sync), in train_step; with --thread the loop runs in a second
thread; with --callback it runs inside a Python comparison function that libc's qsort calls
(Python -> C -> Python); with --fork the process forks first (before CUDA) and the child runs the same program
before the parent (two traced processes, each with its own frames); with --two-paths the loop is
two_paths's, whose copy line calls the driver through two native paths. stdout:
"py_sites: steps=N" (twice with --fork) and exit status 0 when every call succeeded.
"""
import argparse
import ctypes
import functools
import os
import sys
import threading

cu = ctypes.CDLL("libcuda.so.1")


def check(rc, what):
    if rc != 0:
        sys.exit("py_sites: %s failed: CUresult %d" % (what, rc))


def train_step(dev_buf, host, nbytes):
    check(cu.cuMemcpyHtoD_v2(dev_buf, host, ctypes.c_size_t(nbytes)), "cuMemcpyHtoD")  # cutrace: pageable-copy
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")  # cutrace: step-sync


def train(steps, ctx):
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    nbytes = 1 << 20
    d = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(nbytes)), "cuMemAlloc")  # cutrace: alloc
    host = ctypes.create_string_buffer(nbytes)  # pageable
    for _ in range(steps):
        train_step(d, host, nbytes)
    check(cu.cuMemFree_v2(d), "cuMemFree")


def two_paths(steps, ctx):
    """The loop of train, but one line makes both allocations and one every copy, alternately
    through ctypes directly and through functools.partial, whose C code adds native frames: two
    native stacks reach each line (cutrace counts them as one call site); each step then reads 4
    bytes back with a blocking copy instead of synchronizing."""
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    nbytes = 1 << 20
    d = [ctypes.c_uint64(), ctypes.c_uint64()]
    allocs = [cu.cuMemAlloc_v2, functools.partial(cu.cuMemAlloc_v2)]
    for i in range(2):
        check(allocs[i](ctypes.byref(d[i]), ctypes.c_size_t(nbytes)), "cuMemAlloc")  # cutrace: two-paths-alloc
    host = ctypes.create_string_buffer(nbytes)  # pageable
    result = ctypes.create_string_buffer(4)
    copies = [cu.cuMemcpyHtoD_v2, functools.partial(cu.cuMemcpyHtoD_v2)]
    for i in range(steps):
        check(copies[i % 2](d[0], host, ctypes.c_size_t(nbytes)), "cuMemcpyHtoD")  # cutrace: two-paths
        check(cu.cuMemcpyDtoH_v2(result, d[0], ctypes.c_size_t(4)), "cuMemcpyDtoH")  # cutrace: readback
    for buf in d:
        check(cu.cuMemFree_v2(buf), "cuMemFree")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--thread", action="store_true")
    ap.add_argument("--fork", action="store_true")
    ap.add_argument("--callback", action="store_true")
    ap.add_argument("--two-paths", action="store_true")
    o = ap.parse_args()
    child = os.fork() if o.fork else -1
    if child > 0 and os.waitpid(child, 0)[1] != 0:
        return 1  # the child first, alone: the two processes' GPU work never overlaps
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuInit(0), "cuInit")
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    if o.callback:
        cmp_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        ran = []

        def compare(a, b):
            if not ran:
                ran.append(train(o.steps, ctx))  # cutrace: callback
            return 0

        pair = (ctypes.c_int * 2)(1, 2)
        ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), cmp_t(compare))
    elif o.two_paths:
        two_paths(o.steps, ctx)
    elif o.thread:
        t = threading.Thread(target=train, args=(o.steps, ctx))
        t.start()
        t.join()
    else:
        train(o.steps, ctx)
    check(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
    print("py_sites: steps=%d" % o.steps, flush=True)
    if child == 0:
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
