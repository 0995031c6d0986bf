#!/usr/bin/env python3
"""py_loader_tree: loader_tree (loader_tree.c) in Python: a main process driving the CUDA driver
through ctypes and K loader workers started as PyTorch's DataLoader starts them, as
multiprocessing Process objects of the "fork" context, which never use CUDA.

    py_loader_tree [--steps N [--main-ms M] [--existing] [--memset-step] [--epochs E] [--nap-ms S]] K CPU_MS BYTES HOLD_MS FILE

Without --steps: the main process initializes CUDA, allocates BYTES of device memory and copies to it (the trace
starts), writes BYTES bytes into FILE and starts the workers. Each spins until its own CPU time
(time.process_time_ns, the process's since the fork) reaches CPU_MS, reads FILE with os.read to
its end, and reports on stderr "worker pid=P cpu_ns=C read=B" (C its CPU time then, B the bytes
its reads returned). It then waits for the main process's word (the end of a pipe) and returns.
The main process copies every 5 ms for HOLD_MS after the last report, releases and joins the
workers and prints "py_loader_tree: workers=K ok" (exit 0), or exits 1 naming what failed.

With --steps N, loader_tree's training loop (loader_tree.c says it in full): the trace starts
with a memset; FILE gets N * BYTES bytes unless --existing; worker i makes batches i, i + K, ...,
each CPU_MS more of its CPU (i/K of it more before the first) and a pread of BYTES at offset
batch * BYTES, one byte on its own pipe per batch; each step takes its batch, spins M ms of the
main process's CPU and copies 1 MiB to the device. With K = 0 (DataLoader's num_workers=0) the
main process makes each batch itself (CPU_MS, pread) before its M ms; with --memset-step the step
is a queued memset instead of a copy, as the first memset then is (the host's work between steps
is its own, not loading, and no gap follows a synchronous call). Workers
report "worker pid=P cpu_ns=C read=B batches=n", the main process "main cpu_ns=C read=B steps=N"
(C: its main thread's CPU time, the one it spins by; B: the bytes it read itself); the hold uses memsets.
With --epochs E the loop runs E times over the same N batches, each epoch with K workers of its
own that end with it, as a DataLoader's without persistent_workers (a training and a validation
loader take turns the same way): K * E workers report, never more than K alive at once; the hold
follows the last epoch, and "main ..." counts all E * N steps.
With --nap-ms S each worker, after each batch's CPU, sleeps S ms in nap() (a loader waiting on
something of its own), and times both phases on its wall clock (time.monotonic_ns): its report
ends "spin_ns=A nap_ns=B loop_ns=L" (A in spin_until, B in nap, over all its batches; L the
whole loop over them, the batches' reads and writes too).
"""
import ctypes
import multiprocessing
import os
import sys
import time


def worker(report, go, inherited, cpu_goal_ns, path):
    for fd in inherited:  # the main process's ends: the word is their closing
        os.close(fd)
    spin_until(cpu_goal_ns)
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


def spin_until(goal_ns, clock=time.process_time_ns):
    x = 1
    while clock() < goal_ns:
        for _ in range(1000):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF


def read_batch(fd, path, nbytes, b):
    done = 0
    while done < nbytes:
        chunk = os.pread(fd, nbytes - done, b * nbytes + done)
        if not chunk:
            sys.exit("py_loader_tree: pread %s at %d: end of file" % (path, b * nbytes + done))
        done += len(chunk)
    return done


def nap(ms):
    time.sleep(ms / 1000.0)


def batch_worker(report, go, out, inherited, i, k, steps, cpu_ms, nbytes, path, nap_ms):
    for fd in inherited:
        os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    got = made = 0
    spun = napped = 0
    goal = time.process_time_ns() + i * cpu_ms * 1000000 // k
    start = time.monotonic_ns()
    for b in range(i, steps, k):
        goal += cpu_ms * 1000000
        t0 = time.monotonic_ns()
        spin_until(goal)
        t1 = time.monotonic_ns()
        if nap_ms:
            nap(nap_ms)
        t2 = time.monotonic_ns()
        spun, napped = spun + t1 - t0, napped + t2 - t1
        got += read_batch(fd, path, nbytes, b)
        made += 1
        os.write(out, b"b")
    loop = time.monotonic_ns() - start
    os.close(fd)
    line = "worker pid=%d cpu_ns=%d read=%d batches=%d" % (os.getpid(), time.process_time_ns(), got, made)
    line += " spin_ns=%d nap_ns=%d loop_ns=%d\n" % (spun, napped, loop) if nap_ms else "\n"
    os.write(report, line.encode())
    while os.read(go, 1):
        pass


def run_epoch(check, mem, host, chunk, k, steps, main_ms, memset_step, cpu_ms, nbytes, path, nap_ms):
    """Starts the K workers and, with steps, runs the steps on their batches; passes their reports
    on. Returns the workers, the write end of their go pipe, the bytes the main process read and
    its main thread's CPU time in the steps."""
    report_r, report_w = os.pipe()
    go_r, go_w = os.pipe()
    fork = multiprocessing.get_context("fork")
    if steps:
        batch = [os.pipe() for _ in range(k)]
        procs = [fork.Process(target=batch_worker,
                              args=(report_w, go_r, batch[i][1],
                                    [report_r, go_w] + [b[0] for b in batch] +
                                    [b[1] for j, b in enumerate(batch) if j != i],
                                    i, k, steps, cpu_ms, nbytes, path, nap_ms))
                 for i in range(k)]
    else:
        procs = [fork.Process(target=worker, args=(report_w, go_r, (report_r, go_w), cpu_ms * 1000000, path))
                 for _ in range(k)]
    for p in procs:
        p.start()
    os.close(report_w)
    os.close(go_r)
    got = spent = 0
    if steps:
        for b in batch:
            os.close(b[1])
        fd = -1 if k else os.open(path, os.O_RDONLY)
        cpu = time.thread_time_ns
        c0 = cpu()
        for s in range(steps):
            if k and os.read(batch[s % k][0], 1) != b"b":
                sys.exit("py_loader_tree: batch %d: its worker's pipe ended" % s)
            if not k:  # no workers: the main process loads
                spin_until(cpu() + cpu_ms * 1000000, cpu)
                got += read_batch(fd, path, nbytes, s)
            spin_until(cpu() + main_ms * 1000000, cpu)
            if memset_step:
                check("cuMemsetD8Async", mem, ctypes.c_ubyte(0), ctypes.c_size_t(chunk), None)
            else:
                check("cuMemcpyHtoD_v2", mem, host, ctypes.c_size_t(chunk))
        spent = cpu() - c0
        if fd >= 0:
            os.close(fd)
        for b in batch:
            os.close(b[0])
    reports = b""
    while reports.count(b"\n") < k:
        b = os.read(report_r, 4096)
        if not b:
            sys.exit("py_loader_tree: expected %d worker reports, got %d" % (k, reports.count(b"\n")))
        reports += b
    os.close(report_r)
    sys.stderr.write(reports.decode())
    return procs, go_w, got, spent


def release(procs, go_w):
    """The workers' word to end, and their ends."""
    os.close(go_w)
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit("py_loader_tree: worker %d exited %s" % (p.pid, p.exitcode))


def main():
    args = sys.argv[1:]
    steps, main_ms, existing, memset_step, epochs, nap_ms = 0, 0, False, False, 1, 0
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--existing":
            existing = True
        elif opt == "--memset-step":
            memset_step = True
        elif opt == "--steps" and args:
            steps = int(args.pop(0))
        elif opt == "--main-ms" and args:
            main_ms = int(args.pop(0))
        elif opt == "--epochs" and args:
            epochs = int(args.pop(0))
        elif opt == "--nap-ms" and args:
            nap_ms = int(args.pop(0))
        else:
            sys.exit("py_loader_tree: unknown option %s" % opt)
    if len(args) != 5:
        sys.exit("usage: py_loader_tree [--steps N [--main-ms M] [--existing] [--memset-step] [--epochs E] "
                 "[--nap-ms S]] K CPU_MS BYTES HOLD_MS FILE")
    k, cpu_ms, nbytes, hold_ms = (int(a) for a in args[:4])
    path = args[4]
    if not steps and (main_ms or existing or memset_step or epochs != 1 or nap_ms):
        sys.exit("py_loader_tree: --main-ms, --existing, --memset-step, --epochs and --nap-ms need --steps N (N > 0)")
    if epochs < 1:
        sys.exit("py_loader_tree: --epochs: expected 1 or more, found %d" % epochs)
    if k < (0 if steps else 1) or k > 64:
        sys.exit("py_loader_tree: K: expected %d to 64 workers, found %d" % (0 if steps else 1, k))
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
    if memset_step:  # queued, as the steps' are: no gap follows a synchronous call
        check("cuMemsetD8Async", mem, ctypes.c_ubyte(0), ctypes.c_size_t(chunk), None)
    elif steps:
        check("cuMemsetD8_v2", mem, ctypes.c_ubyte(0), ctypes.c_size_t(chunk))
    else:
        check("cuMemcpyHtoD_v2", mem, host, ctypes.c_size_t(chunk))
    if not existing:
        with open(path, "wb") as f:
            left = nbytes * steps if steps else nbytes
            while left:
                n = min(left, chunk)
                f.write(host.raw[:n])
                left -= n

    # the main thread's CPU: the process's other threads (the tracer's sampler, the CUDA
    # library's) are not its work
    cpu_spent = got = 0
    for epoch in range(epochs):
        procs, go_w, n, c = run_epoch(check, mem, host, chunk, k, steps, main_ms, memset_step,
                                      cpu_ms, nbytes, path, nap_ms)
        got, cpu_spent = got + n, cpu_spent + c
        if epoch < epochs - 1:
            release(procs, go_w)
    if steps:
        sys.stderr.write("main cpu_ns=%d read=%d steps=%d\n" % (cpu_spent, got, steps * epochs))
    until = time.monotonic() + hold_ms / 1000.0
    while time.monotonic() < until:
        time.sleep(0.005)
        if steps:
            check("cuMemsetD8_v2", mem, ctypes.c_ubyte(0), ctypes.c_size_t(chunk))
        else:
            check("cuMemcpyHtoD_v2", mem, host, ctypes.c_size_t(chunk))
    release(procs, go_w)
    check("cuMemFree_v2", mem)
    print("py_loader_tree: workers=%d ok" % k)


if __name__ == "__main__":
    main()
