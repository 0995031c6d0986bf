"""pyphases: a thread that spends known phases in known functions at known lines, about 30
Python frames deep, with CUDA calls (the driver through ctypes) between them, so that the
thread sampler's samples can be checked against the program's own clock (issue 28, item 2).

    pyphases rounds [churn | churn=deep] [workers=N]

Each round runs, 30 frames down (deep()):
  compute: a busy loop in compute(), 240 ms, on the line marked "cutrace: compute"
  wait:    time.sleep in wait(), 160 ms, on the line marked "cutrace: wait"
  copy:    cuMemcpyHtoD of 32 MiB from copy(), repeated for 120 ms ("cutrace: copy")
then cuCtxSynchronize. stdout: one line per phase, "pyphases: phase NAME START END" (CLOCK_MONOTONIC
ns, the trace's clock), then "pyphases: rounds=N frames=F" with F the frames deep the phases ran
at (inspect). With churn, a second thread that called CUDA once recurses up and down without pause,
5 to 44 frames deep (frames pushed and popped under the sampler; with churn=deep 5 to 204, and
from 3.11 its data stack grows past a 16 KiB chunk that the interpreter frees as it shrinks) until the main thread is done, then prints
"pyphases: churn=C" (the recursions it made; more than 0). With workers=N, N more threads run
the same rounds at the same time, each with its own buffer (only the main thread prints its
phases): the thread sampler's cost on several CUDA-calling threads (tests/bench/bench_tsample.py)."""
import ctypes
import inspect
import sys
import threading
import time

cu = ctypes.CDLL("libcuda.so.1")
MIB = 1 << 20
clock = time.monotonic_ns


def compute(ms):
    end = clock() + ms * 1000000
    x = 0
    while clock() < end: x += 1  # noqa: E701 (one line: every sample names it)  # cutrace: compute
    return x


def wait(ms):
    time.sleep(ms / 1000)  # cutrace: wait


def copy(ms, dst, src):
    end = clock() + ms * 1000000
    while clock() < end:
        assert cu.cuMemcpyHtoD_v2(dst, src, 32 * MIB) == 0  # cutrace: copy


def phase(name, fn, *args):
    t0 = clock()
    fn(*args)
    if threading.current_thread() is threading.main_thread():
        print("pyphases: phase %s %d %d" % (name, t0, clock()))


def deep(n, fn):
    return deep(n - 1, fn) if n > 0 else fn()


def churn(stop, count):
    assert cu.cuCtxSetCurrent(CTX) == 0 and cu.cuCtxSynchronize() == 0
    while not stop.is_set():
        deep(5 + count[0] % DEPTH, lambda: None)
        count[0] += 1


def main():
    global CTX
    rounds = int(sys.argv[1])
    dev, ctx, dst = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
    assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    CTX = ctx
    assert cu.cuMemAlloc_v2(ctypes.byref(dst), 32 * MIB) == 0
    src = ctypes.create_string_buffer(32 * MIB)
    stop, count = threading.Event(), [0]
    helper = None
    global DEPTH
    DEPTH = 200 if "churn=deep" in sys.argv[2:] else 40
    if "churn" in sys.argv[2:] or "churn=deep" in sys.argv[2:]:
        helper = threading.Thread(target=churn, args=(stop, count))
        helper.start()
    workers = [int(a[8:]) for a in sys.argv[2:] if a.startswith("workers=")]
    workers = [threading.Thread(target=rounds_of, args=(rounds, [], 32 * MIB))
               for _ in range(workers[0] if workers else 0)]
    for w in workers:
        w.start()
    frames = []
    rounds_of(rounds, frames, 0, dst, src)
    for w in workers:
        w.join()
    stop.set()
    if helper:
        helper.join()
        print("pyphases: churn=%d" % count[0])
    print("pyphases: rounds=%d frames=%d" % (rounds, frames[0]))


def rounds_of(rounds, frames, size, dst=None, src=None):
    """rounds of the three phases, 30 frames down; a worker (size: its buffer's) allocates its
    own buffers first."""
    if size:
        dst = ctypes.c_uint64()
        assert cu.cuCtxSetCurrent(CTX) == 0 and cu.cuMemAlloc_v2(ctypes.byref(dst), size) == 0
        src = ctypes.create_string_buffer(size)

    def one_round():
        frames.append(len(inspect.stack(0)))
        phase("compute", compute, 240)
        phase("wait", wait, 160)
        phase("copy", copy, 120, dst, src)

    for _ in range(rounds):
        deep(30, one_round)
        assert cu.cuCtxSynchronize() == 0


main()
