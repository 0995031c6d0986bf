#!/usr/bin/env python3.11
"""py_sites: a Python training loop on the CUDA driver through ctypes, whose CUDA calls are made
on lines marked `# cutrace: <what>`: the tests read the markers to know which file:line each
diagnosis must name (issue 14).

    py_sites [--steps N] [--mib M] [--thread] [--fork] [--callback] [--two-paths] [--exception]
             [--atexit] [--daemon] [--pool] [--runtime]

cuInit; cuDeviceGet(0); cuDevicePrimaryCtxRetain + cuCtxSetCurrent; cuMemAlloc of 1 MiB; then N
[10] steps, each a cuMemcpyHtoD of 1 MiB from pageable memory (marker pageable-copy) and a
cuCtxSynchronize (marker step-sync), in train_step; with --thread the loop runs in a second
thread; with --callback it runs inside a Python comparison function that libc's qsort calls
(Python -> C -> Python); with --fork the process forks first (before CUDA) and the child runs the same program
before the parent (two traced processes, each with its own frames); with --two-paths the loop is
two_paths's, whose copy line calls the driver through two native paths; with --mib M train's
allocation and copies are of M MiB instead (their staging, the host in CUDA, then outweighs the
Python between the calls, so that a host descheduled there does not make a step's gap after its
synchronization one of data loading). stdout:
"py_sites: steps=N" (twice with --fork) and exit status 0 when every call succeeded.

--exception: before the middle step, failing_step makes a cuMemsetD8 inside a `try:` (marker
in-try), raises, makes another in its `finally:` while the exception unwinds it (in-finally), and
train catches it and makes a third (in-except); then sort_raising's qsort calls a Python comparison
that makes a fourth (in-callback) and raises through the C frames of qsort (the unraisable
exception is printed "py_sites: the callback raised StepFailed" on stderr); after
"py_sites: steps=N" the program raises an uncaught StepFailed (a traceback on stderr, exit
status 1).
--atexit: the context is released by an `atexit` handler, at_exit, which first allocates and frees
2 MiB (marker atexit-alloc) and prints "py_sites: at exit".
--daemon: a daemon thread calls cuCtxSynchronize in a loop (marker daemon-sync) from before the
training until the process exits; the context is not released (the thread still uses it).
--runtime: the loop goes through the CUDA runtime (the libcudart.so.13 the loader finds) instead:
cudaMalloc (marker rt-alloc), then N steps of runtime_step, each a cudaMemcpy host-to-device of
1 MiB from pageable memory (rt-copy) and a cudaDeviceSynchronize (rt-sync), then cudaFree
(rt-free); stdout as without it.
--pool: first a multiprocessing Pool of 2 workers forked with the 'fork' start method (one task
each, before the parent uses CUDA) each initializes CUDA and trains (marker pool-train; the
two in turn), printing "py_sites: pool workers=2"; then the parent trains as without it.
"""
import argparse
import atexit
import ctypes
import functools
import multiprocessing
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


class StepFailed(Exception):
    pass


def failing_step(dev_buf, nbytes):
    try:
        check(cu.cuMemsetD8_v2(dev_buf, 0, ctypes.c_size_t(nbytes)), "cuMemsetD8")  # cutrace: in-try
        raise StepFailed("py_sites: the step failed")
    finally:
        check(cu.cuMemsetD8_v2(dev_buf, 1, ctypes.c_size_t(nbytes)), "cuMemsetD8")  # cutrace: in-finally


def sort_raising(dev_buf, nbytes):
    def compare(a, b):
        check(cu.cuMemsetD8_v2(dev_buf, 3, ctypes.c_size_t(nbytes)), "cuMemsetD8")  # cutrace: in-callback
        raise StepFailed("py_sites: the comparison failed")

    cmp_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    pair = (ctypes.c_int * 2)(1, 2)
    ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), cmp_t(compare))  # cutrace: raising-qsort


step_mib = 1  # --mib


def train(steps, ctx, fail_at=-1):
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    nbytes = step_mib << 20
    d = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(nbytes)), "cuMemAlloc")  # cutrace: alloc
    host = ctypes.create_string_buffer(nbytes)  # pageable
    for i in range(steps):
        if i == fail_at:
            try:
                failing_step(d, nbytes)  # cutrace: fail
            except StepFailed:
                check(cu.cuMemsetD8_v2(d, 2, ctypes.c_size_t(nbytes)), "cuMemsetD8")  # cutrace: in-except
            sort_raising(d, nbytes)  # cutrace: sort
        train_step(d, host, nbytes)  # cutrace: step
    check(cu.cuMemFree_v2(d), "cuMemFree")  # cutrace: free


def cuda_context():
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuInit(0), "cuInit")
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    return dev, ctx


def at_exit(dev):
    d = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(2 << 20)), "cuMemAlloc")  # cutrace: atexit-alloc
    check(cu.cuMemFree_v2(d), "cuMemFree")  # cutrace: atexit-free
    check(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
    print("py_sites: at exit", flush=True)


def daemon_loop(ctx, running):
    cu.cuCtxSetCurrent(ctx)
    while True:  # results unchecked: the interpreter may be finalizing
        cu.cuCtxSynchronize()  # cutrace: daemon-sync
        running.set()


gpu_turn = None  # --pool: the workers train in turn, so that the GPU's idle time is each one's own


def pool_init(turn):
    global gpu_turn
    gpu_turn = turn


def pool_worker(steps):
    dev, ctx = cuda_context()
    with gpu_turn:
        train(steps, ctx)  # cutrace: pool-train
    check(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
    return os.getpid()


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


def runtime_step(rt, dev_buf, host, nbytes):
    check(rt.cudaMemcpy(dev_buf, host, ctypes.c_size_t(nbytes), 1), "cudaMemcpy")  # cutrace: rt-copy
    check(rt.cudaDeviceSynchronize(), "cudaDeviceSynchronize")  # cutrace: rt-sync


def runtime_train(steps):
    rt = ctypes.CDLL("libcudart.so.13")
    nbytes = 1 << 20
    d = ctypes.c_void_p()
    check(rt.cudaMalloc(ctypes.byref(d), ctypes.c_size_t(nbytes)), "cudaMalloc")  # cutrace: rt-alloc
    host = ctypes.create_string_buffer(nbytes)  # pageable
    for _ in range(steps):
        runtime_step(rt, d, host, nbytes)  # cutrace: rt-step
    check(rt.cudaFree(d), "cudaFree")  # cutrace: rt-free


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--mib", type=int, default=1)
    ap.add_argument("--thread", action="store_true")
    ap.add_argument("--fork", action="store_true")
    ap.add_argument("--callback", action="store_true")
    ap.add_argument("--two-paths", action="store_true")
    for mode in ("--exception", "--atexit", "--daemon", "--pool", "--runtime"):
        ap.add_argument(mode, action="store_true")
    o = ap.parse_args()
    global step_mib
    step_mib = o.mib
    child = os.fork() if o.fork else -1
    if child > 0 and os.waitpid(child, 0)[1] != 0:
        return 1  # the child first, alone: the two processes' GPU work never overlaps
    if o.pool:
        fork = multiprocessing.get_context("fork")
        pool = fork.Pool(2, pool_init, (fork.Lock(),), maxtasksperchild=1)
        pids = pool.map(pool_worker, [o.steps, o.steps], chunksize=1)
        pool.close()
        pool.join()
        print("py_sites: pool workers=%d" % len(set(pids)), flush=True)
    if o.exception:  # ctypes reports a callback's exception with its address: print what is stable
        sys.unraisablehook = lambda u: print("py_sites: the callback raised %s" % u.exc_type.__name__,
                                             file=sys.stderr, flush=True)
    if o.runtime:
        runtime_train(o.steps)  # cutrace: rt-main
        print("py_sites: steps=%d" % o.steps, flush=True)
        return 0
    dev, ctx = cuda_context()
    if o.daemon:
        running = threading.Event()
        threading.Thread(target=daemon_loop, args=(ctx, running), daemon=True).start()
        running.wait()
    if o.callback:
        cmp_t = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
        ran = []

        def compare(a, b):
            if not ran:
                ran.append(train(o.steps, ctx))  # cutrace: callback
            return 0

        pair = (ctypes.c_int * 2)(1, 2)
        ctypes.CDLL(None).qsort(pair, 2, ctypes.sizeof(ctypes.c_int), cmp_t(compare))  # cutrace: qsort
    elif o.two_paths:
        two_paths(o.steps, ctx)
    elif o.thread:
        t = threading.Thread(target=train, args=(o.steps, ctx))
        t.start()
        t.join()
    else:
        train(o.steps, ctx, o.steps // 2 if o.exception else -1)  # cutrace: train
    if o.atexit:
        atexit.register(at_exit, dev)
    elif not o.daemon:
        check(cu.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
    print("py_sites: steps=%d" % o.steps, flush=True)
    if child == 0:
        os._exit(0)
    if o.exception:
        raise StepFailed("py_sites: the last step failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())  # cutrace: module
