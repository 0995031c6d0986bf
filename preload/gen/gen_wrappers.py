#!/usr/bin/env python3
"""Generates libcutrace's CUDA entry points from NVIDIA's headers (build time, stdlib only).

libcutrace stands in for libcuda.so.1, so it must export every driver entry point the headers
declare (every ABI variant cuda_api.py models: cuMemAlloc, cuMemAlloc_v2, cuMemcpyHtoD_v2_ptds,
...). For each variant one of three patterns is emitted:

  traced    ctp_enter / [pre-hook] / real call / ctp_leave / post-hook / ctp_finish, where the
            hooks are the hand-written recorders of the function's category (ctp_record.h),
            called with the argument expressions of the TRACE table below;
  gpa       cuGetProcAddress[_v2]: the real call, then ctp_gpa_fix swaps the returned pointer
            for cutrace's wrapper of the same variant (no record);
  forward   the real call, nothing else.

The runtime (cuda_runtime_api.h, plus nvcc's __cudaLaunchKernel[_ptsz]) is interposed only for
the functions matching RUNTIME_TRACED, each with its _ptds/_ptsz forms; they record an API call
that is the parent of the driver calls made inside it.

cuBLAS and cuBLASLt (cublas_api.h, cublasLt.h) are interposed only for their GEMM entry points
(BLAS_GEMM, BLAS_LT_GEMM): each records an API call that is the parent of the driver calls made
inside it, and its detail, the GEMM record (ctp_blas.h), in version nodes libcublas.so.13 and
libcublasLt.so.13.

Outputs (in --out): ctp_fns.h (function ids), ctp_wrappers.c (driver), ctp_rt_wrappers.c
(runtime), ctp_blas_wrappers.c (cuBLAS, cuBLASLt), libcutrace.map (the version script: only these entry points are exported; runtime
names in version node libcudart.so.13; the exec and _exit functions of ctp_exec.h under their
glibc nodes; NVTX's InitializeInjectionNvtx2 beside the driver's). A new CUDA version is a regeneration; a TRACE entry naming a parameter that no longer
exists fails the build with the function's name.
"""

import argparse
import os
import platform
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_api  # noqa: E402

# base name -> (hook, post-hook arguments, stream argument for GPU timing or None, options)
# Arguments are C expressions over the variant's parameters: a name, or $N for the N-th
# parameter (names differ between some variants). STREAM(x) marks a stream: for per-thread
# variants it becomes the per-thread default stream when x is 0.
# Options: min_version (older variants have other struct layouts and are only forwarded).
# NVTX's injection entry point (ctp_nvtx.h), exported on purpose: libcutrace is an NVTX tool.
NVTX_EXPORTS = ["InitializeInjectionNvtx2"]
# The C library's exec and _exit functions libcutrace exports (ctp_exec.h), with the glibc
# version that introduced each; on architectures whose first glibc is newer, their base version.
EXEC_EXPORTS = [("execve", "GLIBC_2.2.5"), ("execv", "GLIBC_2.2.5"), ("execvp", "GLIBC_2.2.5"),
                ("execl", "GLIBC_2.2.5"), ("execlp", "GLIBC_2.2.5"), ("execle", "GLIBC_2.2.5"),
                ("fexecve", "GLIBC_2.2.5"), ("execvpe", "GLIBC_2.11"), ("execveat", "GLIBC_2.34"),
                ("_exit", "GLIBC_2.2.5"), ("_Exit", "GLIBC_2.2.5")]
GLIBC_BASE = {"x86_64": "GLIBC_2.2.5", "aarch64": "GLIBC_2.17", "ppc64le": "GLIBC_2.17"}


def glibc_key(ver):
    return tuple(int(x) for x in ver[len("GLIBC_"):].split("."))


def glibc_older(a, b):
    return glibc_key(a) < glibc_key(b)


LAUNCH_ARGS = "f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, STREAM(hStream)"
TRACE = {
    "cuLaunchKernel": ("launch", LAUNCH_ARGS, "hStream", {}),
    "cuLaunchCooperativeKernel": ("launch", LAUNCH_ARGS, "hStream", {}),
    "cuLaunchKernelEx": ("launch_ex", "config, f, STREAM(config ? config->hStream : 0)",
                         "config ? config->hStream : 0", {}),
    "cuGraphLaunch": ("graph_launch", "$0, STREAM($1)", "$1", {}),
    # graph: op, graph, exec, stream, capture mode (the GRAPH record, FORMAT.md 4.10); what names
    # a graph launch's kernels: the captured launches between a capture's begin and end make
    # its graph, an instantiation or update says which graph an exec runs
    "cuStreamBeginCapture": ("graph", "CT_GRAPH_CAPTURE_BEGIN, 0, 0, STREAM($0), "
                             "PARAM_OR(mode, CU_STREAM_CAPTURE_MODE_GLOBAL)", None, {}),
    "cuStreamBeginCaptureToGraph": ("graph", "CT_GRAPH_CAPTURE_BEGIN, (uintptr_t)hGraph, 0, "
                                    "STREAM($0), mode", None, {}),
    "cuStreamEndCapture": ("graph", "CT_GRAPH_CAPTURE_END, CTP_OUT(r, phGraph), 0, STREAM($0), 0",
                           None, {}),
    "cuGraphInstantiate": ("graph", "CT_GRAPH_INSTANTIATE, (uintptr_t)hGraph, "
                           "CTP_OUT(r, phGraphExec), 0, 0", None, {}),
    "cuGraphInstantiateWithFlags": ("graph", "CT_GRAPH_INSTANTIATE, (uintptr_t)hGraph, "
                                    "CTP_OUT(r, phGraphExec), 0, 0", None, {}),
    "cuGraphInstantiateWithParams": ("graph", "CT_GRAPH_INSTANTIATE, (uintptr_t)hGraph, "
                                     "CTP_OUT(r, phGraphExec), 0, 0", None, {}),
    "cuGraphExecUpdate": ("graph", "CT_GRAPH_UPDATE, (uintptr_t)hGraph, (uintptr_t)hGraphExec, 0, 0",
                          None, {}),
    "cuGraphExecDestroy": ("graph", "CT_GRAPH_EXEC_DESTROY, 0, (uintptr_t)hGraphExec, 0, 0", None, {}),
    "cuGraphDestroy": ("graph", "CT_GRAPH_DESTROY, (uintptr_t)hGraph, 0, 0, 0", None, {}),
    # what an exec's node runs from now on (FORMAT.md 4.10, NODE_SET)
    "cuGraphExecNodeSetParams": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                                 "CTP_NODE_TYPE(nodeParams), CTP_NODE_PARAMS(nodeParams)", None, {}),
    "cuGraphExecKernelNodeSetParams": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                                       "CT_GNODE_KERNEL, nodeParams", None,
                                       {"min_version": 12000}),
    "cuGraphExecMemcpyNodeSetParams": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                                       "CT_GNODE_MEMCPY, copyParams", None, {}),
    "cuGraphExecMemsetNodeSetParams": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                                       "CT_GNODE_MEMSET, memsetParams", None, {}),
    # not listed: the exec's work becomes unknown (the last argument is not read)
    "cuGraphExecChildGraphNodeSetParams": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                                           "CT_GNODE_CHANGED, childGraph", None, {}),
    "cuGraphNodeSetEnabled": ("graph_set", "(uintptr_t)hGraphExec, (uintptr_t)hNode, "
                              "CT_GNODE_CHANGED, hNode", None, {}),

    "cuMemcpy": ("copy", "CT_DIR_UNKNOWN, dst, src, ByteCount, STREAM(0), 0", "0", {}),
    "cuMemcpyAsync": ("copy", "CT_DIR_UNKNOWN, dst, src, ByteCount, STREAM(hStream), CT_COPY_ASYNC",
                      "hStream", {}),
    "cuMemcpyHtoD": ("copy", "CT_DIR_HTOD, dstDevice, (uintptr_t)srcHost, ByteCount, STREAM(0), 0",
                     "0", {}),
    "cuMemcpyHtoDAsync": ("copy", "CT_DIR_HTOD, dstDevice, (uintptr_t)srcHost, ByteCount, "
                          "STREAM(hStream), CT_COPY_ASYNC", "hStream", {}),
    "cuMemcpyDtoH": ("copy", "CT_DIR_DTOH, (uintptr_t)dstHost, srcDevice, ByteCount, STREAM(0), 0",
                     "0", {}),
    "cuMemcpyDtoHAsync": ("copy", "CT_DIR_DTOH, (uintptr_t)dstHost, srcDevice, ByteCount, "
                          "STREAM(hStream), CT_COPY_ASYNC", "hStream", {}),
    "cuMemcpyDtoD": ("copy", "CT_DIR_DTOD, dstDevice, srcDevice, ByteCount, STREAM(0), 0", "0", {}),
    "cuMemcpyDtoDAsync": ("copy", "CT_DIR_DTOD, dstDevice, srcDevice, ByteCount, STREAM(hStream), "
                          "CT_COPY_ASYNC", "hStream", {}),
    "cuMemcpyPeer": ("copy", "CT_DIR_PEER, dstDevice, srcDevice, ByteCount, STREAM(0), 0", "0", {}),
    "cuMemcpyPeerAsync": ("copy", "CT_DIR_PEER, dstDevice, srcDevice, ByteCount, STREAM(hStream), "
                          "CT_COPY_ASYNC", "hStream", {}),
    "cuMemcpy2D": ("copy2d", "pCopy, STREAM(0), 0", "0", {"min_version": 3020}),
    "cuMemcpy2DUnaligned": ("copy2d", "pCopy, STREAM(0), 0", "0", {"min_version": 3020}),
    "cuMemcpy2DAsync": ("copy2d", "pCopy, STREAM(hStream), CT_COPY_ASYNC", "hStream",
                        {"min_version": 3020}),
    "cuMemcpy3D": ("copy3d", "pCopy, STREAM(0), 0", "0", {"min_version": 3020}),
    "cuMemcpy3DAsync": ("copy3d", "pCopy, STREAM(hStream), CT_COPY_ASYNC", "hStream",
                        {"min_version": 3020}),

    "cuMemsetD8": ("set", "dstDevice, (uint64_t)N, STREAM(0), 0", "0", {}),
    "cuMemsetD16": ("set", "dstDevice, (uint64_t)N * 2, STREAM(0), 0", "0", {}),
    "cuMemsetD32": ("set", "dstDevice, (uint64_t)N * 4, STREAM(0), 0", "0", {}),
    "cuMemsetD8Async": ("set", "dstDevice, (uint64_t)N, STREAM(hStream), CT_COPY_ASYNC", "hStream", {}),
    "cuMemsetD16Async": ("set", "dstDevice, (uint64_t)N * 2, STREAM(hStream), CT_COPY_ASYNC",
                         "hStream", {}),
    "cuMemsetD32Async": ("set", "dstDevice, (uint64_t)N * 4, STREAM(hStream), CT_COPY_ASYNC",
                         "hStream", {}),
    "cuMemsetD2D8": ("set", "dstDevice, (uint64_t)Width * Height, STREAM(0), CT_COPY_2D", "0", {}),
    "cuMemsetD2D16": ("set", "dstDevice, (uint64_t)Width * Height * 2, STREAM(0), CT_COPY_2D", "0", {}),
    "cuMemsetD2D32": ("set", "dstDevice, (uint64_t)Width * Height * 4, STREAM(0), CT_COPY_2D", "0", {}),
    "cuMemsetD2D8Async": ("set", "dstDevice, (uint64_t)Width * Height, STREAM(hStream), "
                          "CT_COPY_2D | CT_COPY_ASYNC", "hStream", {}),
    "cuMemsetD2D16Async": ("set", "dstDevice, (uint64_t)Width * Height * 2, STREAM(hStream), "
                           "CT_COPY_2D | CT_COPY_ASYNC", "hStream", {}),
    "cuMemsetD2D32Async": ("set", "dstDevice, (uint64_t)Width * Height * 4, STREAM(hStream), "
                           "CT_COPY_2D | CT_COPY_ASYNC", "hStream", {}),

    # alloc: kind, address (read after the call), size, stream, VMM handle
    "cuMemAlloc": ("alloc", "CT_ALLOC_DEVICE, CTP_OUT(r, dptr), bytesize, 0, 0", None, {}),
    "cuMemAllocPitch": ("alloc", "CT_ALLOC_DEVICE, CTP_OUT(r, dptr), "
                        "(uint64_t)CTP_OUT(r, pPitch) * Height, 0, 0", None, {}),
    "cuMemAllocHost": ("alloc", "CT_ALLOC_PINNED, CTP_OUT(r, pp), bytesize, 0, 0", None, {}),
    "cuMemHostAlloc": ("alloc", "CT_ALLOC_PINNED, CTP_OUT(r, pp), bytesize, 0, 0", None, {}),
    "cuMemAllocManaged": ("alloc", "CT_ALLOC_MANAGED, CTP_OUT(r, dptr), bytesize, 0, 0", None, {}),
    "cuMemAllocAsync": ("alloc", "CT_ALLOC_POOL, CTP_OUT(r, dptr), bytesize, STREAM(hStream), 0",
                        None, {}),
    "cuMemAllocFromPoolAsync": ("alloc", "CT_ALLOC_POOL, CTP_OUT(r, dptr), bytesize, "
                                "STREAM(hStream), 0", None, {}),
    "cuMemHostRegister": ("alloc", "CT_ALLOC_HOST_REGISTER, (uintptr_t)p, bytesize, 0, 0", None, {}),
    "cuMemCreate": ("alloc", "CT_ALLOC_VMM_PHYSICAL, 0, size, 0, CTP_OUT(r, handle)", None, {}),
    "cuMemMap": ("alloc", "CT_ALLOC_VMM_MAP, ptr, size, 0, handle", None, {}),
    "cuMemAddressReserve": ("alloc", "CT_ALLOC_VMM_RESERVE, CTP_OUT(r, ptr), size, 0, 0", None, {}),
    # free: kind (UNKNOWN: whatever cutrace saw allocated there), address, size (0: the size
    # cutrace saw allocated), stream, VMM handle
    "cuMemFree": ("free", "CT_ALLOC_UNKNOWN, dptr, 0, 0, 0", None, {}),
    "cuMemFreeHost": ("free", "CT_ALLOC_PINNED, (uintptr_t)p, 0, 0, 0", None, {}),
    "cuMemFreeAsync": ("free", "CT_ALLOC_POOL, dptr, 0, STREAM(hStream), 0", None, {}),
    "cuMemHostUnregister": ("free", "CT_ALLOC_HOST_REGISTER, (uintptr_t)p, 0, 0, 0", None, {}),
    "cuMemRelease": ("free", "CT_ALLOC_VMM_PHYSICAL, 0, 0, 0, handle", None, {}),
    "cuMemUnmap": ("free", "CT_ALLOC_VMM_MAP, ptr, size, 0, 0", None, {}),
    "cuMemAddressFree": ("free", "CT_ALLOC_VMM_RESERVE, ptr, size, 0, 0", None, {}),

    # sync: kind, object
    "cuCtxSynchronize": ("sync", "CT_SYNC_CONTEXT, 0", None, {}),
    "cuStreamSynchronize": ("sync", "CT_SYNC_STREAM, STREAM(hStream)", None, {}),
    "cuEventSynchronize": ("sync", "CT_SYNC_EVENT, (uintptr_t)hEvent", None, {}),
    "cuStreamWaitEvent": ("sync", "CT_SYNC_STREAM_WAIT_EVENT, (uintptr_t)hEvent", None, {}),

    # names: the handle created, the kernel name
    "cuModuleGetFunction": ("name", "CTP_OUT(r, hfunc), name", None, {}),
    "cuLibraryGetKernel": ("name", "CTP_OUT(r, pKernel), name", None, {}),
    "cuKernelGetFunction": ("kernel_function", "CTP_OUT(r, pFunc), (uintptr_t)kernel", None, {}),

    "cuStreamCreate": ("stream", "CT_STREAM_CREATE, CTP_OUT(r, phStream), Flags, 0", None, {}),
    "cuStreamCreateWithPriority": ("stream", "CT_STREAM_CREATE, CTP_OUT(r, phStream), flags, "
                                   "priority", None, {}),
    "cuStreamDestroy": ("stream", "CT_STREAM_DESTROY, (uintptr_t)$0, 0, 0", None, {}),

    # api: the API record alone. A driver program's first call (cuInit, also the runtime's first
    # request), so every process that uses CUDA starts its trace even if all its calls fail or
    # none of them is of the categories above.
    "cuInit": ("api", None, None, {}),
    # the time between two events: the program times itself, and the event synchronizations
    # that read the times are not defects (the analyzer's excessive-sync)
    "cuEventElapsedTime": ("api", None, None, {}),
    # the profiler range calls (cudaProfiler.h; NVIDIA's and the simulated cudaProfilerStart/Stop
    # call them): the edges of a --capture-range cudaProfilerApi window (ctp_capture.h)
    "cuProfilerStart": ("profiler", "CT_CAPTURE_START", None, {}),
    "cuProfilerStop": ("profiler", "CT_CAPTURE_STOP", None, {}),
}
# Recorded outside the windows of a windowed trace too (CTP_FN_KEEP, ctp_capture.h): what a
# reader needs to know the state inside them (memory in use, streams, kernel names) and the calls
# that bring CUDA up or open and close a window.
KEEP_HOOKS = {"alloc", "free", "name", "kernel_function", "stream", "profiler", "api", "graph",
              "graph_set"}
RUNTIME_KEEP = re.compile(
    r"^(cudaMalloc\w*|cudaFree\w*|cudaHostAlloc|cudaHostRegister|cudaHostUnregister|"
    r"cudaDeviceReset|cudaGetDeviceCount|cudaSetDevice|cudaInitDevice|cudaProfilerStart|"
    r"cudaProfilerStop)(_pt[sd][sz])?$")
# Calls that destroy a context, whose events go with it: a pre-hook collects its GPU timings
# first (ctp_gpu.h). A release destroys the primary context only on its last reference, which
# cannot be told beforehand: every release is treated so. Not recorded; exported like traced calls so cuGetProcAddress answers reach it.
CTX_GONE = {"cuCtxDestroy": ("ctx_gone", "(uintptr_t)$0"),
            "cuDevicePrimaryCtxReset": ("primary_gone", "$0"),
            "cuDevicePrimaryCtxRelease": ("primary_gone", "$0")}
# Recorded as a synchronization only in their legacy form (cuCtxSynchronize_v2 takes a context).
SYNC_CTX_OBJECT = {"cuCtxSynchronize_v2": "(uintptr_t)ctx"}
GPA = {"cuGetProcAddress"}
GPU_TIMED = {"launch", "launch_ex", "graph_launch", "copy", "copy2d", "copy3d", "set"}

# Besides the categories: the calls that bring a runtime program's CUDA up (device count and
# selection), which may be all it makes when they fail, and the profiler range calls.
RUNTIME_TRACED = re.compile(
    r"^(cudaMalloc\w*|cudaFree\w*|cudaHostAlloc|cudaHostRegister|cudaHostUnregister|"
    r"cudaMemcpy\w*|cudaMemset\w*|cudaLaunch\w*|cudaGraphLaunch|cudaDeviceSynchronize|"
    r"cudaStreamBeginCapture\w*|cudaStreamEndCapture|cudaGraphInstantiate\w*|cudaGraphExecUpdate|"
    r"cudaGraphExecDestroy|cudaGraphDestroy|cudaGraphExec(Kernel|Memcpy|Memset)?NodeSetParams\w*|"
    r"cudaStreamSynchronize|cudaEventSynchronize|cudaStreamWaitEvent|cudaDeviceReset|"
    r"cudaGetDriverEntryPoint\w*|__cudaLaunchKernel|cudaGetDeviceCount|cudaSetDevice|"
    r"cudaInitDevice|cudaProfilerStart|cudaProfilerStop|cudaEventElapsedTime)$")
RUNTIME_GPA = {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"}

# cuBLAS and cuBLASLt (cublas_api.h, cublasLt.h): the GEMM entry points, each recording its
# shape and types (GEMM record) and being the parent of the driver calls it makes. Per family,
# by a regex over the base name (without _v2 / _64): the argument expressions of ctp_on_gemm
# after m, n, k (A, B, C types, compute type, batch), over the prototype's parameters. A
# letter-typed call (cublasSgemm) implies its types; {t} and {c} stand for them. Not exported:
# the grouped batched calls (an array of shapes per group) and every other cuBLAS function.
BLAS_LETTER = {"S": ("CUDA_R_32F", "CUBLAS_COMPUTE_32F"), "D": ("CUDA_R_64F", "CUBLAS_COMPUTE_64F"),
               "C": ("CUDA_C_32F", "CUBLAS_COMPUTE_32F"), "Z": ("CUDA_C_64F", "CUBLAS_COMPUTE_64F"),
               "H": ("CUDA_R_16F", "CUBLAS_COMPUTE_16F")}
BLAS_GEMM = [
    (r"cublas([SDCZH])gemm", "{t}, {t}, {t}, {c}, 1"),
    (r"cublas([SDCZH])gemm(?:Batched|StridedBatched)", "{t}, {t}, {t}, {c}, batchCount"),
    (r"cublas([CZ])gemm3m", "{t}, {t}, {t}, {c}, 1"),
    (r"cublas([CZ])gemm3m(?:Batched|StridedBatched)", "{t}, {t}, {t}, {c}, batchCount"),
    (r"cublas(S|C)gemmEx|cublas(C)gemm3mEx", "Atype, Btype, Ctype, CUBLAS_COMPUTE_32F, 1"),
    (r"cublasGemmEx", "Atype, Btype, Ctype, computeType, 1"),
    (r"cublasGemm(?:Strided)?BatchedEx", "Atype, Btype, Ctype, computeType, batchCount"),
]
BLAS_LT_GEMM = "cublasLtMatmul"
_BLAS_PROTO_RE = re.compile(r"\bcublasStatus_t\s+CUBLASWINAPI\s+(\w+)\s*\(([^;{}]*?)\)\s*;", re.S)
BLAS_SONAMES = {"cublas_api.h": "libcublas.so.13", "cublasLt.h": "libcublasLt.so.13"}

_RT_PROTO_RE = re.compile(r"extern\s+(?:__host__\s+|__cudart_builtin__\s+|__device__\s+|"
                          r"CUDART_CB\s+)*(cudaError_t)\s+CUDARTAPI\s+(\w+)\s*\(([^;{}]*?)\)\s*;",
                          re.S)
_RT_PT_RE = re.compile(r"#\s*define\s+(\w+)\s+__CUDART_API_PT(DS|SZ)\((\w+)\)")
_NVCC_LAUNCH_RE = re.compile(r"extern\s+\"C\"\s+(cudaError_t)\s+CUDARTAPI\s+(__cudaLaunchKernel(?:_ptsz)?)"
                             r"\s*\(([^;{}]*?)\)\s*;", re.S)


def die(msg):
    sys.stderr.write("gen_wrappers.py: error: %s\n" % msg)
    sys.exit(1)


def expand(expr, variant):
    names = [p.name for p in variant.params]

    def pos(m):
        i = int(m.group(1))
        if i >= len(names):
            die("%s: $%d but the function has %d parameters" % (variant.symbol, i, len(names)))
        return names[i]

    expr = re.sub(r"\$(\d+)", pos, expr)
    # PARAM_OR(name, default): the parameter where this variant has it (cuStreamBeginCapture_v2's
    # mode), else the default its older variant implies
    expr = re.sub(r"PARAM_OR\((\w+),\s*(\w+)\)", lambda m: m.group(1) if m.group(1) in names
                  else m.group(2), expr)
    if variant.stream:
        expr = re.sub(r"STREAM\(", "CTP_STREAM_PT(", expr)
    else:
        expr = re.sub(r"STREAM\(", "(uintptr_t)(", expr)
    # Every identifier that is not a field (after -> or .), a cutrace macro, a type or the
    # result must be a parameter of this variant.
    for ident in re.findall(r"(?<![\w>.])([A-Za-z_]\w*)", expr):
        if ident.startswith(("CT_", "CTP_", "CU_STREAM_CAPTURE_MODE_")) or ident in ("uintptr_t", "uint64_t", "r") or ident in names:
            continue
        die("%s: TRACE names parameter '%s', which its prototype (%s) lacks"
            % (variant.symbol, ident, variant.decl()))
    return expr


def driver_variant_code(v, fid):
    """One exported driver entry point: (C code, whether it is traced)."""
    pfn = "(%s (*)(%s))" % (v.ret, v.param_list())
    head = "CTP_EXPORT %s\n{\n" % v.decl()
    if v.base in GPA:
        return (head + "    void *real = ctp_resolve(%s);\n"
                "    if (!real)\n        return CUDA_ERROR_NOT_FOUND;\n"
                "    CUresult r = (%s real)(%s);\n"
                "    ctp_gpa_fix(r == CUDA_SUCCESS, pfn);\n"
                "    return r;\n}\n" % (fid, pfn, v.args()), True)
    if v.base in CTX_GONE:
        hook, arg = CTX_GONE[v.base]
        return (head + "    ctp_session_%s(%s);\n" % (hook, expand(arg, v)) +
                "    void *real = ctp_resolve(%s);\n"
                "    return real ? (%s real)(%s) : CUDA_ERROR_NOT_FOUND;\n}\n"
                % (fid, pfn, v.args()), True)
    spec = TRACE.get(v.base)
    if spec and v.version >= spec[3].get("min_version", 0):
        hook, args, stream, _ = spec
        if v.symbol in SYNC_CTX_OBJECT:
            args = "CT_SYNC_CONTEXT, " + SYNC_CTX_OBJECT[v.symbol]
        out = head + "    ctp_call c;\n    ctp_enter(&c, %s);\n" % fid
        if hook in GPU_TIMED:
            sexpr = expand(stream, v)
            if v.stream:
                sexpr = "CTP_STREAM_PT(%s)" % sexpr
            out += "    ctp_gpu_begin(&c, (uintptr_t)(%s));\n" % sexpr
        post = "" if hook == "api" else "    ctp_on_%s(&c, r, %s);\n" % (hook, expand(args, v))
        out += ("    void *real = ctp_resolve(%s);\n"
                "    CUresult r = real ? (%s real)(%s) : CUDA_ERROR_NOT_FOUND;\n"
                "    ctp_leave(&c, r);\n%s"
                "    ctp_finish(&c);\n"
                "    return r;\n}\n" % (fid, pfn, v.args(), post))
        return out, True
    return (head + "    void *real = ctp_resolve(%s);\n"
            "    return real ? (%s real)(%s) : CUDA_ERROR_NOT_FOUND;\n}\n"
            % (fid, pfn, v.args()), False)


def runtime_functions(include):
    """(symbol, ret, params) for every traced runtime entry point, per-thread forms included."""
    text = ""
    for header in ("cuda_runtime_api.h", "cuda_profiler_api.h"):
        with open(os.path.join(include, header)) as f:
            text += cuda_api._strip_comments(f.read())
    with open(os.path.join(include, "crt", "device_functions.h")) as f:
        nvcc = cuda_api._strip_comments(f.read())
    text = re.sub(r"\s__dv\([^)]*\)", "", text)
    protos = {}
    for ret, name, params in _RT_PROTO_RE.findall(text) + _NVCC_LAUNCH_RE.findall(nvcc):
        params = re.sub(r"\s*=[^,]*", "", params)  # C++ default arguments
        protos.setdefault(name, (ret, cuda_api._parse_params(params, "cuda_runtime_api.h: " + name)))
    for need in ("cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "__cudaLaunchKernel",
                 "__cudaLaunchKernel_ptsz", "cudaGetDriverEntryPoint", "cudaProfilerStart"):
        if need not in protos:
            die("no prototype of %s found in %s" % (need, include))
    out = []
    for name in sorted(protos):
        if RUNTIME_TRACED.match(name) or name == "__cudaLaunchKernel_ptsz":
            out.append((name, name) + protos[name])
    for alias, kind, target in _RT_PT_RE.findall(text):
        if alias == target and alias in protos and RUNTIME_TRACED.match(alias):
            out.append((alias + "_pt" + kind.lower(), alias) + protos[alias])
    return sorted(set((s, b, r, tuple(p)) for s, b, r, p in out))


def runtime_code(sym, base, ret, params, fid):
    plist = ", ".join(cuda_api._join_decl(p.type, p.name) for p in params) or "void"
    args = ", ".join(p.name for p in params)
    pfn = "(%s (*)(%s))" % (ret, plist)
    post = ""
    if base in RUNTIME_GPA:
        post = "    ctp_gpa_fix(r == cudaSuccess, funcPtr);\n"
    return ("CTP_EXPORT %s %s(%s)\n{\n"
            "    ctp_call c;\n    ctp_enter(&c, %s);\n"
            "    void *real = ctp_rt_resolve(%s);\n"
            "    %s r = real ? (%s real)(%s) : cudaErrorNotSupported;\n"
            "    ctp_leave(&c, (uint32_t)r);\n%s"
            "    ctp_finish(&c);\n"
            "    return r;\n}\n" % (ret, sym, plist, fid, fid, ret, pfn, args, post))


def blas_functions(include):
    """(symbol, soname, params, ctp_on_gemm arguments after m, n, k or None for cublasLtMatmul)
    for every GEMM entry point cublas_api.h and cublasLt.h declare."""
    out = []
    for header, soname in sorted(BLAS_SONAMES.items()):
        with open(os.path.join(include, header)) as f:
            text = cuda_api._strip_comments(f.read())
        for name, params in _BLAS_PROTO_RE.findall(text):
            base = re.sub(r"(_v2)?(_64)?$", "", name)
            if name == BLAS_LT_GEMM:
                spec = None
            else:
                spec = next((a for rx, a in BLAS_GEMM if re.fullmatch(rx, base)), False)
                if spec is False:
                    continue
                m = re.match(r"cublas([SDCZH])", base)
                if "{t}" in spec:
                    t, c = BLAS_LETTER[m.group(1)]
                    spec = spec.format(t=t, c=c)
            plist = cuda_api._parse_params(params, header + ": " + name)
            names = [p.name for p in plist]
            need = ["transa", "transb", "m", "n", "k"] if spec else \
                ["computeDesc", "Adesc", "Bdesc", "Cdesc", "Ddesc"]
            for ident in need + re.findall(r"\b([a-z]\w*)\b", spec or ""):
                if ident not in names:
                    die("%s: the GEMM table names parameter '%s', which %s/%s's prototype (%s) lacks"
                        % (name, ident, include, header, ", ".join(names)))
            out.append((name, soname, plist, spec))
    for need in ("cublasSgemm_v2", "cublasGemmEx", "cublasSgemmStridedBatched_64", BLAS_LT_GEMM):
        if need not in [o[0] for o in out]:
            die("no prototype of %s found in %s" % (need, include))
    return sorted(out, key=lambda o: o[0])


def blas_code(sym, params, spec, fid):
    plist = ", ".join(cuda_api._join_decl(p.type, p.name) for p in params)
    args = ", ".join(p.name for p in params)
    if spec is None:
        post = "    ctp_on_gemm_lt(&c, r, computeDesc, Adesc, Bdesc, Cdesc, Ddesc);\n"
    else:
        post = "    ctp_on_gemm(&c, transa, transb, m, n, k, %s);\n" % spec
    return ("CTP_EXPORT cublasStatus_t %s(%s)\n{\n"
            "    ctp_call c;\n    ctp_enter(&c, %s);\n"
            "    void *real = ctp_rt_resolve(%s);\n"
            "    cublasStatus_t r = real ? ((cublasStatus_t (*)(%s))real)(%s)\n"
            "                            : CUBLAS_STATUS_NOT_INITIALIZED;\n"
            "    ctp_leave(&c, (uint32_t)r);\n%s"
            "    ctp_finish(&c);\n"
            "    return r;\n}\n" % (sym, plist, fid, fid, plist, args, post))


BLAS_PRELUDE = """/* Generated by preload/gen/gen_wrappers.py from NVIDIA's headers: do not edit. */
#include <stdint.h>
#include <cublas_api.h>
#include <cublasLt.h>
#include "ctp_blas.h"
#include "ctp_fns.h"
#include "ctp_trace.h"
#define CTP_EXPORT __attribute__((visibility("default")))
/* cublas_api.h declares the half-precision calls (cublasHgemm*) for C++ only, where __half is a
 * class; through a pointer, an incomplete struct has the same ABI. */
typedef struct __half __half;
"""


PRELUDE = """/* Generated by preload/gen/gen_wrappers.py from NVIDIA's headers: do not edit. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <stdint.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaProfiler.h>
#include "ctp_fns.h"
#include "ctp_gpu.h"
#include "ctp_record.h"
#include "ctp_trace.h"
#define CTP_EXPORT __attribute__((visibility("default")))
"""

RT_PRELUDE = """/* Generated by preload/gen/gen_wrappers.py from NVIDIA's headers: do not edit. */
#include <stdint.h>
#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>
#include "ctp_fns.h"
#include "ctp_record.h"
#include "ctp_trace.h"
#define CTP_EXPORT __attribute__((visibility("default")))
"""


def main():
    ap = argparse.ArgumentParser(description="generate libcutrace's wrappers")
    ap.add_argument("--include", default=cuda_api.DEFAULT_INCLUDE)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    api = cuda_api.load(os.path.join(a.include, "cuda.h"),
                        os.path.join(a.include, "cudaTypedefs.h"))
    if api.problems:
        die("cuda_api model problems:\n  " + "\n  ".join(api.problems))
    for base in list(TRACE) + sorted(GPA):
        if base not in api.functions:
            die("TRACE names %s, which %s/cuda.h does not declare" % (base, a.include))
    # The interop headers' prototypes need GL/EGL/VDPAU types: only cudaProfiler.h is built.
    driver = [api.symbols[s] for s in sorted(api.symbols)
              if api.symbols[s].header in ("cuda.h", "cudaProfiler.h")]
    runtime = runtime_functions(a.include)

    blas = blas_functions(a.include)

    def keep(hook):
        return " | CTP_FN_KEEP" if hook else ""
    fns = [(v.symbol, "CTP_FN_DRIVER" + keep(v.base in TRACE and TRACE[v.base][0] in KEEP_HOOKS))
           for v in driver] + \
          [(s, "CTP_FN_RUNTIME" + keep(RUNTIME_KEEP.match(s))) for s, _, _, _ in runtime] + \
          [(s, "CTP_FN_RUNTIME | CTP_FN_LIBRARY") for s, _, _, _ in blas]
    if len(fns) >= 65536:
        die("%d functions do not fit the 16-bit function id" % len(fns))
    os.makedirs(a.out, exist_ok=True)

    hdr = ["/* Generated by preload/gen/gen_wrappers.py: do not edit. */",
           "#ifndef CTP_FNS_H", "#define CTP_FNS_H",
           "#define CTP_NDRIVER %d" % len(driver), "#define CTP_NFNS %d" % len(fns)]
    hdr += ["#define CTP_FN_%s %d" % (name, i) for i, (name, _) in enumerate(fns)]
    hdr += ["#endif", ""]

    body = [PRELUDE]
    traced = []
    for v in driver:
        code, is_traced = driver_variant_code(v, "CTP_FN_" + v.symbol)
        if is_traced:
            traced.append(v.symbol)
        body.append(code)
    soname = {s: "libcudart.so.13" for s, _, _, _ in runtime}
    soname.update({s: so for s, so, _, _ in blas})
    body.append("const ctp_fn_info ctp_fns[CTP_NFNS] = {\n%s\n};\n" % ",\n".join(
        '    {"%s", %s}' % (n, f) for n, f in fns))
    body.append("const char *const ctp_fn_soname[CTP_NFNS] = {\n%s\n};\n" % "\n".join(
        '    [CTP_FN_%s] = "%s",' % (n, so) for n, so in sorted(soname.items())))
    body.append("const unsigned ctp_nfns = CTP_NFNS;\n")
    body.append("/* cutrace's wrapper of each traced driver variant (cuGetProcAddress answers). */\n"
                "void *const ctp_wrapper_of[CTP_NDRIVER] = {\n%s\n};\n" % "\n".join(
                    "    [CTP_FN_%s] = (void *)%s," % (s, s) for s in traced))

    rt = [RT_PRELUDE]
    for sym, base, ret, params in runtime:
        rt.append(runtime_code(sym, base, ret, params, "CTP_FN_" + sym))

    bl = [BLAS_PRELUDE]
    for sym, _, params, spec in blas:
        bl.append(blas_code(sym, params, spec, "CTP_FN_" + sym))

    mapfile = ["/* Generated by preload/gen/gen_wrappers.py: do not edit. */",
               "CUTRACE_DRIVER {", "  global:"]
    mapfile += ["    %s;" % v.symbol for v in driver]
    # NVTX's injection entry point (ctp_nvtx.c), which the NVTX library finds with dlsym on the
    # library NVTX_INJECTION64_PATH names: unversioned use, so in the default node.
    mapfile += ["    %s;" % s for s in NVTX_EXPORTS]
    mapfile += ["  local:", "    *;", "};", "libcudart.so.13 {", "  global:"]
    mapfile += ["    %s;" % s for s, _, _, _ in runtime]
    mapfile += ["};"]
    # cuBLAS's and cuBLASLt's own version nodes, so programs' references bind to cutrace's.
    for soname in sorted(set(BLAS_SONAMES.values())):
        mapfile += ["%s {" % soname, "  global:"]
        mapfile += ["    %s;" % sym for sym, so, _, _ in blas if so == soname] + ["};"]
    # The exec and _exit functions (ctp_exec.c), under the C library's own version nodes so
    # programs' references (execv@GLIBC_2.2.5, _exit@GLIBC_2.2.5) bind to them.
    base = GLIBC_BASE.get(platform.machine(), "GLIBC_2.2.5")
    nodes = {}
    for sym, ver in EXEC_EXPORTS:
        nodes.setdefault(base if glibc_older(ver, base) else ver, []).append(sym)
    for ver in sorted(nodes, key=glibc_key):
        mapfile += ["%s {" % ver, "  global:"] + ["    %s;" % s for s in nodes[ver]] + ["};"]
    mapfile += [""]

    for name, lines in (("ctp_fns.h", hdr), ("ctp_wrappers.c", body), ("ctp_rt_wrappers.c", rt),
                        ("ctp_blas_wrappers.c", bl),
                        ("libcutrace.map", mapfile)):
        tmp = os.path.join(a.out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write("\n".join(lines))
        os.replace(tmp, os.path.join(a.out, name))


if __name__ == "__main__":
    main()
