"""py_calls: the cost of a CUDA call made from Python (run_bench.py, bench_pystack.py).

    python3 py_calls.py N

A 3-deep Python call chain (main -> loop -> step) calls cuCtxSynchronize through ctypes N times
after N/10 warm-up calls; prints "py_calls: ns_per_call=X" (wall time of the N calls / N)."""
import ctypes
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")


def step(f):
    if f() != 0:
        sys.exit("py_calls: cuCtxSynchronize failed")


def loop(f, n):
    t = time.perf_counter_ns()
    for _ in range(n):
        step(f)
    return time.perf_counter_ns() - t


def main():
    n = int(sys.argv[1])
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if (cu.cuInit(0) or cu.cuDeviceGet(ctypes.byref(dev), 0) or
            cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) or cu.cuCtxSetCurrent(ctx)):
        sys.exit("py_calls: CUDA does not start")
    loop(cu.cuCtxSynchronize, n // 10)
    print("py_calls: ns_per_call=%.1f" % (loop(cu.cuCtxSynchronize, n) / n))


main()
