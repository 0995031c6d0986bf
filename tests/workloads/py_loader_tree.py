#!/usr/bin/env python3
"""py_loader_tree: loader_tree (loader_tree.c) in Python: a main process driving the CUDA driver
through ctypes and K loader workers started as PyTorch's DataLoader starts them, as
multiprocessing Process objects of the "fork" context, which never use CUDA.

    py_loader_tree K CPU_MS BYTES HOLD_MS FILE

The main process initializes CUDA, allocates BYTES of device memory and copies to it (the trace
starts), writes BYTES bytes into FILE and starts the workers. Each spins until its own CPU time
(time.process_time_ns, the process's since the fork) reaches CPU_MS, reads FILE with os.read to
its end, and reports on stderr "worker pid=P cpu_ns=C read=B" (C its CPU time then, B the bytes
its reads returned). It then waits for the main process's word (the end of a pipe) and returns.
The main process copies every 5 ms for HOLD_MS after the last report, releases and joins the
workers and prints "py_loader_tree: workers=K ok" (exit 0), or exits 1 naming what failed.
"""
import ctypes
import multiprocessing
import os
import sys
import time


def worker(report, go, inherited, cpu_goal_ns, path):
    for fd in inherited:  # the main process's ends: the word is their closing
        os.close(fd)
    x = 1
    while time.process_time_ns() < cpu_goal_ns:
        for _ in range(1000):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    fd = os.open(path, os.O_RDONLY)
    got = 0
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        got += len(b)
    os.close(fd)
    line = "worker pid=%d cpu_ns=%d read=%d\n" % (os.getpid(), time.process_time_ns(), got)
    os.write(report, line.encode())
    while os.read(go, 1):
        pass


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: py_loader_tree K CPU_MS BYTES HOLD_MS FILE")
    k, cpu_ms, nbytes, hold_ms = (int(a) for a in sys.argv[1:5])
    path = sys.argv[5]
    cu = ctypes.CDLL("libcuda.so.1")

    def check(name, *args):
        rc = getattr(cu, name)(*args)
        if rc != 0:
            sys.exit("py_loader_tree: %s failed: CUresult %d" % (name, rc))

    dev, ctx, mem = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    check("cuInit", 0)
    check("cuDeviceGet", ctypes.byref(dev), 0)
    check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    check("cuCtxSetCurrent", ctx)
    chunk = 1 << 20
    host = ctypes.create_string_buffer(chunk)
    check("cuMemAlloc_v2", ctypes.byref(mem), ctypes.c_size_t(chunk))
    check("cuMemcpyHtoD_v2", mem, host, ctypes.c_size_t(chunk))
    with open(path, "wb") as f:
        left = nbytes
        while left:
            n = min(left, chunk)
            f.write(host.raw[:n])
            left -= n

    report_r, report_w = os.pipe()
    go_r, go_w = os.pipe()
    fork = multiprocessing.get_context("fork")
    procs = [fork.Process(target=worker, args=(report_w, go_r, (report_r, go_w), cpu_ms * 1000000, path))
             for _ in range(k)]
    for p in procs:
        p.start()
    os.close(report_w)
    os.close(go_r)
    reports = b""
    while reports.count(b"\n") < k:
        b = os.read(report_r, 4096)
        if not b:
            sys.exit("py_loader_tree: expected %d worker reports, got %d" % (k, reports.count(b"\n")))
        reports += b
    sys.stderr.write(reports.decode())
    until = time.monotonic() + hold_ms / 1000.0
    while time.monotonic() < until:
        time.sleep(0.005)
        check("cuMemcpyHtoD_v2", mem, host, ctypes.c_size_t(chunk))
    os.close(go_w)
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit("py_loader_tree: worker %d exited %s" % (p.pid, p.exitcode))
    check("cuMemFree_v2", mem)
    print("py_loader_tree: workers=%d ok" % k)


if __name__ == "__main__":
    main()
