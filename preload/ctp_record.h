/* What each category of traced call records (the hooks the generated wrappers call).
 *
 * Every ctp_on_* hook runs after the real call (ctp_leave done, ctp_finish not yet), returns at once
 * when c->th is NULL (thread not traced), and appends its detail record with the call's
 * correlation id. Handles and pointers arrive as uint64_t. One hook serves every ABI variant of
 * its category; the generator (preload/gen/gen_wrappers.py) picks the arguments. */
#ifndef CTP_RECORD_H
#define CTP_RECORD_H

#include <stdatomic.h>
#include <stdint.h>
#include <cuda.h>

#include "ctp_emit.h"
#include "ctp_state.h"

/* ---- argument helpers for generated code ---- */
/* The value an output parameter received, or 0 if the call failed. */
#define CTP_OUT(r, p) ((r) == 0 && (p) ? (uint64_t)(uintptr_t) * (p) : 0)
/* Per-thread variants: stream 0 means the calling thread's default stream. */
/* A CUgraphNodeParams' node type and the parameters of that type ctp_on_graph_set reads (every
 * member of its union but the memcpy's begins where the union does). */
#define CTP_NODE_TYPE(p) ((p) ? (unsigned)(p)->type : (unsigned)CU_GRAPH_NODE_TYPE_EMPTY)
#define CTP_NODE_PARAMS(p)                                                                   \
    (!(p) ? NULL : (p)->type == CU_GRAPH_NODE_TYPE_MEMCPY ? (const void *)&(p)->memcpy.copyParams \
                                                          : (const void *)&(p)->kernel)
#define CTP_STREAM_PT(s) ((s) ? (uint64_t)(uintptr_t)(s) : (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

/* ---- hooks ---- */
void ctp_on_launch(ctp_call *c, CUresult r, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shared, uint64_t stream);
void ctp_on_launch_ex(ctp_call *c, CUresult r, const CUlaunchConfig *cfg, CUfunction f,
                     uint64_t stream);
/* cuGraphLaunch: a GRAPH record naming the exec launched, then the LAUNCH record of the graph
 * as a whole (named "[CUDA graph]", flagged CT_LAUNCH_GRAPH, timed as one operation). */
void ctp_on_graph_launch(ctp_call *c, CUresult r, CUgraphExec g, uint64_t stream);
/* Stream capture, graph and exec calls (op: enum ct_graph_op): their GRAPH record. A
 * successful instantiation or update first lists the graph's kernel, memcpy and memset nodes
 * (child graphs' included) through the real driver, a NODE record each. */
void ctp_on_graph(ctp_call *c, CUresult r, unsigned op, uint64_t graph, uint64_t exec,
                  uint64_t stream, unsigned mode);
/* cuGraphExecNodeSetParams, cuGraphExec{Kernel,Memcpy,Memset}NodeSetParams: if it succeeded, a
 * NODE_SET record, what exec's node now runs, from the parameters p of its node type
 * (CUgraphNodeType; nothing for a type a reader does not count). */
void ctp_on_graph_set(ctp_call *c, CUresult r, uint64_t exec, uint64_t node, unsigned type,
                      const void *p);
void ctp_on_copy(ctp_call *c, CUresult r, unsigned dir, uint64_t dst, uint64_t src, uint64_t bytes,
                uint64_t stream, unsigned flags);
void ctp_on_copy2d(ctp_call *c, CUresult r, const CUDA_MEMCPY2D *p, uint64_t stream,
                  unsigned flags);
void ctp_on_copy3d(ctp_call *c, CUresult r, const CUDA_MEMCPY3D *p, uint64_t stream,
                  unsigned flags);
void ctp_on_set(ctp_call *c, CUresult r, uint64_t dst, uint64_t bytes, uint64_t stream,
               unsigned flags);
void ctp_on_alloc(ctp_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                 uint64_t stream, uint64_t handle);
void ctp_on_free(ctp_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                uint64_t stream, uint64_t handle);
void ctp_on_sync(ctp_call *c, CUresult r, unsigned kind, uint64_t object);
void ctp_on_name(ctp_call *c, CUresult r, uint64_t handle, const char *name);
void ctp_on_kernel_function(ctp_call *c, CUresult r, uint64_t func, uint64_t kernel);
void ctp_on_stream(ctp_call *c, CUresult r, unsigned op, uint64_t stream, unsigned flags,
                  int priority);
/* cuProfilerStart / Stop (op: CT_CAPTURE_START / STOP): the API record, and with --capture-range
 * cudaProfilerApi the window's start or stop (ctp_capture.h), whatever the call returned. */
void ctp_on_profiler(ctp_call *c, CUresult r, unsigned op);

#endif
