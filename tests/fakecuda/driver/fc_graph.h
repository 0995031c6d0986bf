/* Graphs shared by fc_graph.c (stream capture), fc_gnode.c (building graphs node by node,
 * queries, node parameters) and fc_gexec.c (instantiation, updates, launches).
 *
 * A graph owns its nodes (an array; node->idx is the position). A node keeps its incoming edges
 * (deps); outgoing edges are found by scanning. Node parameters are held by value: a kernel
 * node's arguments are copied when the node is made or its parameters set (the layout comes
 * from the kernel's image), as CUDA does. An executable graph owns a private clone of the graph
 * it was made from, indexed like it, so the original's node handles name its nodes. */
#ifndef FC_GRAPH_H
#define FC_GRAPH_H

#include "fc.h"

#define FC_GRAPH_MAGIC 0x6a6a0001u
#define FC_GNODE_MAGIC 0x6a6a0002u
#define FC_GEXEC_MAGIC 0x6a6a0003u

/* An allocation made by a memory-allocation node: its address is fixed when the node is made
 * and stays valid while any graph or executable graph holding the node lives. */
typedef struct {
    _Atomic int refs;
    CUdeviceptr p;
    unsigned long long id; /* the range's (fc_range): freed only if the program has not */
} fc_galloc;

struct CUgraphNode_st {
    uint32_t magic;
    struct CUgraph_st *g;
    size_t idx;
    CUgraphNodeType type;
    struct CUgraphNode_st **deps;
    size_t ndeps, capdeps;
    struct CUgraphNode_st *orig; /* in a clone: the node it copies (cuGraphNodeFindInClone) */
    int disabled;                /* in an executable graph: cuGraphNodeSetEnabled(0) */
    union {
        struct {
            struct CUfunc_st *f;
            fakecuda_launch launch;
            void **args;  /* a block: nparams pointers, then the values (fc_kernel_args_copy) */
            void **raw;   /* the caller's array when the kernel's layout is unknown */
            fc_ctx *ctx;
        } k;
        struct {
            CUDA_MEMCPY3D p;
            fc_ctx *ctx;
        } copy;
        struct {
            CUDA_MEMSET_NODE_PARAMS p;
            fc_ctx *ctx;
        } set;
        CUDA_HOST_NODE_PARAMS host;
        CUevent ev;                /* event record and wait nodes */
        struct CUgraph_st *child;  /* owned */
        struct {
            CUDA_MEM_ALLOC_NODE_PARAMS p;
            fc_galloc *a;
        } alloc;
        CUdeviceptr free;
        struct {
            CUDA_CONDITIONAL_NODE_PARAMS p; /* p.phGraph_out: body */
            struct CUgraph_st **body;       /* p.size graphs, owned */
        } cond;
    } u;
};

/* A conditional handle (cuGraphConditionalHandleCreate): the value a conditional node tests,
 * set by the host implementations of kernels (fakecuda_graph_set_conditional). Handles live
 * as long as the process (a handle is a few bytes; a graph may be destroyed while a launch
 * that sets it still runs). */
typedef struct {
    uint32_t magic;
    _Atomic unsigned value;
    unsigned dflt;
    unsigned flags; /* CU_GRAPH_COND_ASSIGN_DEFAULT */
    fc_ctx *ctx;
} fc_cond;
#define FC_COND_MAGIC 0x6a6a0004u

struct CUgraph_st {
    uint32_t magic;
    struct CUgraphNode_st **nodes;
    size_t n, cap;
    fc_cond **conds; /* the handles made for it */
    size_t nconds;
};

struct CUgraphExec_st {
    uint32_t magic;
    struct CUgraph_st *g;   /* private clone, indexed like src */
    struct CUgraph_st *src; /* the graph it was instantiated from (only compared, never read) */
    size_t nsrc;
    unsigned long long flags;
    fc_ctx *ctx;
};

/* A graph that is not yet filled in. */
struct CUgraph_st *fc_graph_new(void);
void fc_graph_free(struct CUgraph_st *g);
/* A deep copy (child graphs, kernel arguments; allocations shared); clone nodes' orig set. */
struct CUgraph_st *fc_graph_clone(const struct CUgraph_st *g);
/* Adds a node of type t depending on deps (checked: nodes of g); the caller fills u. NULL and
 * *r set on invalid dependencies. */
struct CUgraphNode_st *fc_node_add(struct CUgraph_st *g, CUgraphNodeType t,
                                   struct CUgraphNode_st *const *deps, size_t ndeps,
                                   CUresult *r);
/* Kernel node parameters from a launch's description; CUDA_SUCCESS or the launch's error. */
CUresult fc_node_set_kernel(struct CUgraphNode_st *n, const void *func, const unsigned grid[3],
                            const unsigned block[3], unsigned smem, void **params,
                            void **extra, fc_ctx *ctx);
/* Releases a node's parameters (not its edges). */
void fc_node_params_free(struct CUgraphNode_st *n);
/* Copies src's parameters into dst (same type), replacing dst's. */
void fc_node_params_copy(struct CUgraphNode_st *dst, const struct CUgraphNode_st *src);
/* n's conditional bodies (p.size of them): clones of from's, or empty graphs (from NULL). */
void fc_cond_bodies(struct CUgraphNode_st *n, struct CUgraph_st *const *from);
/* The conditional handle h, or NULL if it is not one. */
fc_cond *fc_cond_of(CUgraphConditionalHandle h);
/* A valid node handle. */
int fc_node_valid(const struct CUgraphNode_st *n);
/* A topological order of g's nodes (n indices): 0, or -1 if g has a cycle. */
int fc_graph_topo(const struct CUgraph_st *g, size_t *order);
/* Node parameters by type, validated as cuGraphAdd*Node validates them: CUDA_SUCCESS (n
 * updated) or the error (n unchanged). ctx NULL: the current context. */
CUresult fc_set_kernel_v2(struct CUgraphNode_st *n, const CUDA_KERNEL_NODE_PARAMS *p);
CUresult fc_set_copy(struct CUgraphNode_st *n, const CUDA_MEMCPY3D *p, CUcontext ctx);
CUresult fc_set_memset(struct CUgraphNode_st *n, const CUDA_MEMSET_NODE_PARAMS *p,
                       CUcontext ctx);
CUresult fc_set_host(struct CUgraphNode_st *n, const CUDA_HOST_NODE_PARAMS *p);
CUresult fc_set_event(struct CUgraphNode_st *n, CUevent ev);
CUresult fc_set_child(struct CUgraphNode_st *n, CUgraph child, int move);
/* A memory-allocation node's allocation, made in c (NULL: the current context); p->dptr set. */
CUresult fc_set_alloc(struct CUgraphNode_st *n, CUDA_MEM_ALLOC_NODE_PARAMS *p, fc_ctx *c);
CUresult fc_set_generic(struct CUgraphNode_st *n, CUgraphNodeParams *p);

/* cuGraphLaunch on a capturing s: a child graph node, a copy of g; returns 1. 0: s is not
 * capturing. */
int fc_capture_graph(fc_stream *s, const struct CUgraph_st *g);
/* cuStreamGetCaptureInfo's graph and dependencies of s (NULL and 0 when not capturing); the
 * arrays stay valid until s's next captured operation. */
CUresult fc_capture_deps(fc_stream *s, CUgraph *graph, const CUgraphNode **deps,
                         const CUgraphEdgeData **edges, size_t *ndeps);
/* fc_launch.c: a kernel's arguments copied into one block laid out as the kernel's image
 * says (NULL when the layout is unknown or there are none); the duration of a launch. */
void **fc_kernel_args_copy(const struct CUfunc_st *f, void **params);
/* fc_copy.c: the duration and copy engine of a stream-ordered copy of bytes between the
 * two addresses (a graph's copy: never staged, never blocking the host). */
void fc_copy_model(fc_op *op, fc_ctx *c, uintptr_t src, uintptr_t dst, size_t bytes);
/* fc_copy.c: slice z of a 3D copy as a 2D one. */
CUDA_MEMCPY2D fc_copy3d_slice(const CUDA_MEMCPY3D *p, size_t z);
/* fc_event.c / fc_stream.c: record ev on s, make s wait for ev (the non-capturing paths). */
void fc_event_record_on(fc_stream *s, CUevent ev);
void fc_stream_wait_event_on(fc_stream *s, CUevent ev);

#endif
