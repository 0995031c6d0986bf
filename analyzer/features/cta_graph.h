/* CUDA graphs of a process, from its GRAPH records and its LAUNCH and COPY records flagged
 * captured (FORMAT.md 4.10): which kernels, copies and sets each graph launch ran, and how often
 * the same graph was instantiated again (the graph-reinstantiation diagnosis).
 *
 * Contract: the join (cta_join.c) calls these in record order, per process. An exec runs the
 * nodes listed by the NODE records of its instantiation or last update (a graph's nodes as the
 * driver listed them, child graphs' included; none known if some were lost), as changed since
 * by NODE_SET records; where an instantiation or update had none, those of the graph's capture: the captured launches and
 * copies made while its capture was open, on the capturing stream or, while exactly one capture
 * of the process is open, on any stream (one joined to it through an event). A graph built
 * otherwise and not listed has no known nodes (n 0). Node lists live until
 * cta_graph_proc_free, so what cta_graph_launch_nodes returns stays valid. */
#ifndef CTA_GRAPH_H
#define CTA_GRAPH_H

#include "cta_feature.h"
#include "cta_feature_slots.h"

typedef struct {
    uint32_t kidx;                /* kernel name index (cta_model.kernels) */
    uint64_t node;                /* its node's handle (0: from a capture) */
    ct_rec_launch l;              /* name and configuration (a captured LAUNCH record's) */
} cta_gnode;

typedef struct {
    uint64_t node;                /* as cta_gnode's */
    ct_rec_copy cp;               /* operation, direction, bytes and memory kinds */
} cta_gcopy;

typedef struct {
    const cta_gnode *v;           /* kernels */
    size_t n;                     /* 0: none known */
    const cta_gcopy *c;           /* copies and sets */
    size_t nc;
} cta_gnodes;

/* Instantiations of the process, for graph-reinstantiation: of graphs with known kernels, those
 * of a graph of the same kernels and configurations (its shape) as one instantiated before, and
 * what all instantiations of such shapes cost the host beyond the most expensive one of each
 * (which instantiating once would keep). */
typedef struct {
    uint64_t instantiations, instantiate_ns;  /* every successful instantiation, its host time */
    uint64_t repeated, repeated_shapes;       /* instantiations of a shape seen before; shapes */
    uint64_t repeat_ns;                       /* their cost beyond one per shape */
    uint64_t first_repeat, first_repeat_ns;   /* the first of them: its call's start, host time
                                               * (repeated 0: none) */
    uint64_t updates;                         /* successful cuGraphExecUpdate calls */
    uint64_t launches;                        /* graph launches, and kernels, copies and sets */
    uint64_t launch_kernels, launch_copies;   /* they ran as far as known */
    uint64_t unknown_launches;                /* launches of an exec with no known kernels */
} cta_graph_stats;

/* A captured LAUNCH record (kidx: its kernel's index). */
void cta_graph_captured(cta_proc *p, const ct_rec_launch *l, uint32_t kidx);
/* A captured COPY record. */
void cta_graph_captured_copy(cta_proc *p, const ct_rec_copy *cp);
/* A GRAPH record (ts: its time, its call's end); host_ns: its call's host time (0 unknown); kidx:
 * a kernel node's kernel index (NODE and NODE_SET records). For a launch, the kernels, copies and
 * sets it ran. */
cta_gnodes cta_graph_rec(cta_proc *p, const ct_rec_graph *g, uint64_t ts, uint64_t host_ns,
                         uint32_t kidx);
/* What the graph launch with this correlation id ran (n and nc 0: not a known graph launch). */
cta_gnodes cta_graph_launch_nodes(const cta_proc *p, uint64_t corr);
/* The process's statistics (all 0 without graphs). */
cta_graph_stats cta_graph_stats_of(const cta_proc *p);
void cta_graph_proc_free(cta_proc *p);

/* The feature (cta_features.c): GRAPH records, captured LAUNCH and COPY records; each
 * process's statistics in the summary, after its capture windows (text: a line of the Run
 * section; JSON: "graphs"). */
extern const cta_feature cta_graph_feature;

#endif
