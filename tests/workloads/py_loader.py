#!/usr/bin/env python3
"""py_loader: a Python training loop driving the CUDA driver through ctypes, fed by a forked
loader pool: the shape of a PyTorch job with DataLoader workers, in the standard library only.

    py_loader [--steps N] [--loader-ms X] [--workers W] [--batch-bytes B] [--launches K]

Sequence (defaults in brackets):
  cuInit; cuDeviceGet(0); cuDevicePrimaryCtxRetain + cuCtxSetCurrent; 2 cuDeviceGetAttribute
  (compute capability); cuModuleLoadData of driver_api's cubin for that architecture (found next
  to this program, built from driver_api_kernels.cu) + cuModuleGetFunction "vec_add";
  2 cuMemAlloc of B [4194304] bytes (the batch, the output) and 1 of 400 bytes (the bias);
  a cuMemcpyHtoD of the 400-byte bias; then a fork-context multiprocessing.Pool of W [2] worker
  processes, forked after CUDA is initialized, which never call CUDA. Each of N [20] steps:
    the main thread waits for the pool to produce batch i (a worker sleeps X [20] ms, as a
    loader reading files, then builds B bytes of float32 a[j] = (i + j) % 100);
    cuMemcpyHtoD of the B-byte batch from pageable memory;
    K [8] cuLaunchKernel of vec_add on the default stream: c = a + bias over the first 100
    elements <<<1, 256>>>, then c = c + a over all B/4 <<<ceil(B/4/256), 256>>> K-1 times;
    cuMemcpyDtoH of 4 bytes (c[0], expected 1 + K * (i % 100));
    cuCtxSynchronize.
  Then cuMemFree x3, cuModuleUnload, cuDevicePrimaryCtxRelease.

What a correct trace shows: one process (the workers leave no trace), N x K kernels named
vec_add, N + 1 host-to-device copies from pageable memory (N of B bytes), N device-to-host copies
of 4 bytes, N cuCtxSynchronize calls; the GPU idle while the main thread waits for each batch
after the first: N - 1 data-loading gaps of about X ms.

stdout: "py_loader: steps=N launches=N*K h2d_bytes=... workers=W" and "py_loader: verify=ok"
(or FAILED with the first wrong step); exit status 0 only if verified.
"""
import argparse
import array
import ctypes
import multiprocessing
import os
import sys
import time


def make_batch(step, nbytes, loader_ms):
    """A loader worker's job: wait like I/O, then build the batch (no CUDA here)."""
    time.sleep(loader_ms / 1000.0)
    base = array.array("f", [float((step + k) % 100) for k in range(100)])
    reps = nbytes // (4 * 100) + 1
    return (base * reps).tobytes()[:nbytes]


class Driver:
    """The few driver entry points the loop needs, with their results checked."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def __call__(self, name, *args):
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            sys.exit("py_loader: %s failed: CUresult %d" % (name, rc))


def main():
    ap = argparse.ArgumentParser(description="Python ctypes training loop with a forked loader pool")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--loader-ms", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-bytes", type=int, default=4 << 20)
    ap.add_argument("--launches", type=int, default=8)
    o = ap.parse_args()
    if o.steps < 1 or o.workers < 1 or o.launches < 1 or o.batch_bytes < 400 or o.batch_bytes % 4:
        ap.error("steps, workers and launches must be positive; batch-bytes a multiple of 4, >= 400")

    cu = Driver()
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    cu("cuInit", 0)
    cu("cuDeviceGet", ctypes.byref(dev), 0)
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)
    major, minor = ctypes.c_int(), ctypes.c_int()
    cu("cuDeviceGetAttribute", ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
    cu("cuDeviceGetAttribute", ctypes.byref(minor), 76, dev)  # COMPUTE_CAPABILITY_MINOR
    arch = {7: "75", 8: "80", 9: "90"}.get(major.value)
    if arch is None or (arch == "75" and minor.value < 5):
        sys.exit("py_loader: expected compute capability 7.5, 8.x or 9.x, found %d.%d" % (major.value, minor.value))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "driver_api_kernels.sm_%s.cubin" % arch), "rb") as f:
        image = f.read()
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    cu("cuModuleLoadData", ctypes.byref(mod), ctypes.c_char_p(image))
    cu("cuModuleGetFunction", ctypes.byref(fn), mod, b"vec_add")

    n = o.batch_bytes // 4
    d_a, d_c, d_bias = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
    cu("cuMemAlloc_v2", ctypes.byref(d_a), ctypes.c_size_t(o.batch_bytes))
    cu("cuMemAlloc_v2", ctypes.byref(d_c), ctypes.c_size_t(o.batch_bytes))
    cu("cuMemAlloc_v2", ctypes.byref(d_bias), ctypes.c_size_t(400))
    bias = (ctypes.c_float * 100)(*([1.0] * 100))
    cu("cuMemcpyHtoD_v2", d_bias, bias, ctypes.c_size_t(400))
    # the bias covers the first 100 elements, which the check reads
    n_c = ctypes.c_int(n)
    n_first = ctypes.c_int(100)
    first = (ctypes.c_void_p * 4)(ctypes.addressof(d_c), ctypes.addressof(d_a),
                                  ctypes.addressof(d_bias), ctypes.addressof(n_first))
    rest = (ctypes.c_void_p * 4)(ctypes.addressof(d_c), ctypes.addressof(d_c),
                                 ctypes.addressof(d_a), ctypes.addressof(n_c))
    grid = (n + 255) // 256

    pool = multiprocessing.get_context("fork").Pool(o.workers)
    bad = None
    out = ctypes.c_float()
    for step in range(o.steps):
        batch = pool.apply(make_batch, (step, o.batch_bytes, o.loader_ms))
        host = ctypes.create_string_buffer(batch, len(batch))  # pageable
        cu("cuMemcpyHtoD_v2", d_a, host, ctypes.c_size_t(o.batch_bytes))
        for k in range(o.launches):
            cu("cuLaunchKernel", fn, 1 if k == 0 else grid, 1, 1, 256, 1, 1, 0, None,
               first if k == 0 else rest, None)
        cu("cuMemcpyDtoH_v2", ctypes.byref(out), d_c, ctypes.c_size_t(4))
        cu("cuCtxSynchronize")
        want = 1.0 + o.launches * (step % 100)
        if out.value != want and bad is None:
            bad = "step %d: c[0] = %g, expected %g" % (step, out.value, want)
    pool.close()
    pool.join()
    cu("cuMemFree_v2", d_a)
    cu("cuMemFree_v2", d_c)
    cu("cuMemFree_v2", d_bias)
    cu("cuModuleUnload", mod)
    cu("cuDevicePrimaryCtxRelease", dev)
    print("py_loader: steps=%d launches=%d h2d_bytes=%d workers=%d"
          % (o.steps, o.steps * o.launches, o.steps * o.batch_bytes, o.workers))
    print("py_loader: verify=%s" % ("ok" if bad is None else "FAILED " + bad))
    return 0 if bad is None else 1


if __name__ == "__main__":
    sys.exit(main())
