"""ends.py: a Python program that drives the CUDA driver through ctypes, then ends as asked.

    python3 ends.py sys.exit|os._exit|KeyboardInterrupt

It allocates 1 MiB with cuMemAlloc_v2, sets it with cuMemsetD8_v2 (both traced calls), prints
"ends.py: cuda ok", then ends by sys.exit(4) (the interpreter finalizes, then calls exit(4)),
os._exit(6) (the C library's _exit(6) at once, through its dynamic symbol) or an uncaught
KeyboardInterrupt, as Ctrl-C raises (the interpreter finalizes, then kills itself with SIGINT,
its handler set back to the default).
"""
import ctypes
import os
import sys


def check(r, what):
    if r != 0:
        print("ends.py: %s returned %d" % (what, r), file=sys.stderr)
        sys.exit(2)


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("sys.exit", "os._exit", "KeyboardInterrupt"):
        print("usage: ends.py sys.exit|os._exit|KeyboardInterrupt", file=sys.stderr)
        sys.exit(2)
    cu = ctypes.CDLL("libcuda.so.1")
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ptr = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(1 << 20)), "cuMemAlloc_v2")
    check(cu.cuMemsetD8_v2(ptr, ctypes.c_ubyte(7), ctypes.c_size_t(1 << 20)), "cuMemsetD8_v2")
    print("ends.py: cuda ok", flush=True)
    if sys.argv[1] == "sys.exit":
        sys.exit(4)
    if sys.argv[1] == "KeyboardInterrupt":
        raise KeyboardInterrupt
    os._exit(6)


main()
