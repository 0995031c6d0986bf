"""pysub: CUDA calls made from a sub-interpreter (issue 14: reading frames there must neither crash
nor name a wrong line).

    python3 pysub.py

The main interpreter runs CODE in a sub-interpreter (not isolated, so ctypes loads there); CODE
calls cuCtxSynchronize 3 times from sub_step. stdout: "pysub: sync_line=S module_line=M" (the
lines of CODE, "<string>" to the interpreter, marked `# cutrace: sync` and `# cutrace: loop`),
then "pysub: ok"; exit status 0 when every call succeeded."""
try:
    import _xxsubinterpreters as interpreters
except ImportError:
    import _interpreters as interpreters

CODE = '''import ctypes
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
def sub_step():
    return cu.cuCtxSynchronize()  # cutrace: sync
assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0 and cu.cuCtxSetCurrent(ctx) == 0
for _ in range(3):
    assert sub_step() == 0  # cutrace: loop
'''


def line_of(marker):
    return 1 + [i for i, t in enumerate(CODE.splitlines()) if t.endswith("# cutrace: " + marker)][0]


def main():
    print("pysub: sync_line=%d module_line=%d" % (line_of("sync"), line_of("loop")))
    try:
        iid = interpreters.create(isolated=False)
    except TypeError:
        iid = interpreters.create()
    interpreters.run_string(iid, CODE)
    print("pysub: ok")


main()
