"""A Python program on CUDA's driver API through cuda-python (cuda.bindings.driver), with its
kernels in PTX, as numba and hand-written kernels do: the PTX is linked with the linker API
(cuLinkCreate, cuLinkAddData, cuLinkComplete) and the image loaded with cuModuleLoadData. Two
kernels, --iters launches of each, one host-to-device and one device-to-host copy per
iteration. For the pytorch suite (tests/pytorch): prints what it did (the counts a trace must
show); the simulated GPU does not run PTX, so results are not checked.
"""
import argparse
import ctypes

from cuda.bindings import driver as cu

ap = argparse.ArgumentParser()
ap.add_argument("--iters", type=int, default=5)
ap.add_argument("--n", type=int, default=1 << 16)
args = ap.parse_args()

def entry(name, op):
    """A kernel applying `op` (PTX computing %f2 from %f1) to each float of p[0, n)."""
    return """
.visible .entry %s(.param .u64 p, .param .u32 n)
{
    .reg .pred %%p<2>;
    .reg .b32 %%r<6>;
    .reg .f32 %%f<3>;
    .reg .b64 %%rd<5>;
    ld.param.u64 %%rd1, [p];
    ld.param.u32 %%r2, [n];
    mov.u32 %%r3, %%ctaid.x;
    mov.u32 %%r4, %%ntid.x;
    mov.u32 %%r5, %%tid.x;
    mad.lo.s32 %%r1, %%r3, %%r4, %%r5;
    setp.ge.u32 %%p1, %%r1, %%r2;
    @%%p1 bra DONE;
    cvta.to.global.u64 %%rd2, %%rd1;
    mul.wide.u32 %%rd3, %%r1, 4;
    add.s64 %%rd4, %%rd2, %%rd3;
    ld.global.f32 %%f1, [%%rd4];
    %s;
    st.global.f32 [%%rd4], %%f2;
DONE:
    ret;
}
""" % (name, op)


PTX = (".version 8.0\n.target sm_90\n.address_size 64\n" +
       entry("scale_by_two", "add.f32 %f2, %f1, %f1") +
       entry("add_one", "add.f32 %f2, %f1, 0f3F800000")).encode()


def check(result):
    err = result[0] if isinstance(result, tuple) else result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError("CUDA driver call failed: %s" % err)
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


check(cu.cuInit(0))
dev = check(cu.cuDeviceGet(0))
ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
check(cu.cuCtxSetCurrent(ctx))

link = check(cu.cuLinkCreate(0, [], []))
check(cu.cuLinkAddData(link, cu.CUjitInputType.CU_JIT_INPUT_PTX, PTX, len(PTX), b"kernels.ptx",
                       0, [], []))
image, size = check(cu.cuLinkComplete(link))
module = check(cu.cuModuleLoadData(image))
check(cu.cuLinkDestroy(link))
kernels = [check(cu.cuModuleGetFunction(module, name)) for name in (b"scale_by_two", b"add_one")]

nbytes = args.n * 4
host = bytearray(nbytes)
dptr = check(cu.cuMemAlloc(nbytes))  # cutrace: alloc
stream = check(cu.cuStreamCreate(0))
threads = 256
blocks = (args.n + threads - 1) // threads
ptr_arg = ctypes.c_uint64(int(dptr))
n_arg = ctypes.c_uint32(args.n)
params = (ctypes.c_void_p * 2)(ctypes.addressof(ptr_arg), ctypes.addressof(n_arg))
for _ in range(args.iters):
    check(cu.cuMemcpyHtoDAsync(dptr, host, nbytes, stream))  # cutrace: h2d
    for k in kernels:
        check(cu.cuLaunchKernel(k, blocks, 1, 1, threads, 1, 1, 0, stream,
                                ctypes.addressof(params), 0))
    check(cu.cuMemcpyDtoHAsync(host, dptr, nbytes, stream))
check(cu.cuStreamSynchronize(stream))  # cutrace: sync
check(cu.cuStreamDestroy(stream))
check(cu.cuMemFree(dptr))
check(cu.cuModuleUnload(module))
check(cu.cuDevicePrimaryCtxRelease(dev))
print("linked %d bytes of PTX into a %d-byte image" % (len(PTX), size))
print("launches %d kernels %d copies %d bytes per copy %d" %
      (2 * args.iters, len(kernels), 2 * args.iters, nbytes))
