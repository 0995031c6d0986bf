"""pycode: code objects made and freed one after another, each calling the driver from its own
line, so that later ones are likely to be allocated where earlier ones were (issue 14: a frame
must not be named after the code object that used to live at its address).

    pycode N

Makes N functions in turn, each from source compiled under the file name "gen_I.py" whose
cuCtxSynchronize call is on line I + 2; calls it once and frees it (gc.collect) before the next.
stdout: "pycode: calls=N", then what the interpreter says of itself, for the PYTHON record:
"pycode: hexversion=0x... executable=... base_prefix=... base_exec_prefix=... path=A:B:..."
(sys.path); exit status 0 when every call succeeded."""
import ctypes
import gc
import sys

cu = ctypes.CDLL("libcuda.so.1")


def main():
    n = int(sys.argv[1])
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    for i in range(n):
        src = "\n" * i + "def gen():\n    return cu.cuCtxSynchronize()\n"
        space = {"cu": cu}
        exec(compile(src, "gen_%d.py" % i, "exec"), space)
        assert space["gen"]() == 0
        del space
        gc.collect()
    print("pycode: calls=%d" % n)
    print("pycode: hexversion=0x%x executable=%s base_prefix=%s base_exec_prefix=%s path=%s" % (
        sys.hexversion, sys.executable, sys.base_prefix, sys.base_exec_prefix, ":".join(sys.path)))


main()
