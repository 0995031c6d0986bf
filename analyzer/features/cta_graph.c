/* CUDA graphs of a process (see cta_graph.h). */
#include "cta_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_map.h"
#include "cta_out.h"
#include "cta_sweep.h"

typedef struct {
    cta_gnode *v;
    size_t n, cap;
    cta_gcopy *c;
    size_t nc, ccap;
    uint64_t owner;               /* the exec a NODE_SET made it for, while no launch ran it */
} glist;

typedef struct {
    uint64_t stream;
    uint32_t list;
} gcapture;

typedef struct {
    uint64_t count, ns, max_ns;
} gshape;

struct cta_graph_proc {
    glist *lists;                 /* node lists; 0 is the empty one (kernels unknown) */
    size_t nlists, lists_cap;
    gcapture *caps;               /* captures open now */
    size_t ncaps, caps_cap;
    ct_hash graph_of, exec_of;    /* handle -> list */
    ct_hash launch_of;            /* a graph launch's correlation id -> list */
    ct_hash listed;               /* an instantiation's or update's correlation id -> the list its
                                   * NODE records fill (threads' calls may interleave) */
    cta_map shape_idx;            /* a list's nodes (kernel and configuration) -> shape */
    gshape *shapes;
    size_t shapes_cap;
    cta_graph_stats st;
};

static struct cta_graph_proc *gp_of(cta_proc *p)
{
    struct cta_graph_proc *g = p->feat[CTA_FEAT_GRAPH];
    if (!g) {
        p->feat[CTA_FEAT_GRAPH] = g = cta_xmalloc(sizeof *g, "CUDA graphs");
        cta_map_init(&g->shape_idx);
        g->nlists = 1;
        cta_grow(&g->lists, &g->lists_cap, 1, sizeof *g->lists);
    }
    return g;
}

static uint32_t new_list(struct cta_graph_proc *g)
{
    cta_grow(&g->lists, &g->lists_cap, g->nlists + 1, sizeof *g->lists);
    g->lists[g->nlists] = (glist){0};
    return (uint32_t)g->nlists++;
}

static uint32_t list_of(const ct_hash *h, uint64_t handle)
{
    const uint32_t *v = ct_hash_find(h, handle);
    return v ? *v : 0;
}

static void set_list(ct_hash *h, uint64_t handle, uint32_t list)
{
    if (list)
        cta_xhash_put(h, handle, list, "CUDA graph handles");
    else
        ct_hash_del(h, handle, NULL);
}

/* The open capture a captured launch on `stream` belongs to, or NULL. */
static gcapture *capture_of(struct cta_graph_proc *g, uint64_t stream)
{
    for (size_t i = 0; i < g->ncaps; i++)
        if (g->caps[i].stream == stream)
            return &g->caps[i];
    return g->ncaps == 1 ? &g->caps[0] : NULL;
}

static cta_gnode *add_kernel(glist *gl)
{
    cta_grow(&gl->v, &gl->cap, gl->n + 1, sizeof *gl->v);
    return &gl->v[gl->n++];
}

static cta_gcopy *add_copy(glist *gl)
{
    cta_grow(&gl->c, &gl->ccap, gl->nc + 1, sizeof *gl->c);
    return &gl->c[gl->nc++];
}

void cta_graph_captured(cta_proc *p, const ct_rec_launch *l, uint32_t kidx)
{
    struct cta_graph_proc *g = gp_of(p);
    gcapture *c = capture_of(g, l->stream);
    if (c)
        *add_kernel(&g->lists[c->list]) = (cta_gnode){.kidx = kidx, .l = *l};
}

void cta_graph_captured_copy(cta_proc *p, const ct_rec_copy *cp)
{
    struct cta_graph_proc *g = gp_of(p);
    gcapture *c = capture_of(g, cp->stream);
    if (c)
        *add_copy(&g->lists[c->list]) = (cta_gcopy){.cp = *cp};
}

/* A NODE or NODE_SET record's node as a graph's kernel or copy, into gn or gc (by its type). */
static int node_of(const ct_rec_graph *r, uint32_t kidx, cta_gnode *gn, cta_gcopy *gc)
{
    if (r->node_type == CT_GNODE_KERNEL) {
        *gn = (cta_gnode){.kidx = kidx, .node = r->node};
        gn->l = (ct_rec_launch){.corr = r->corr, .function = r->function, .symbol = r->symbol,
                                .shared_bytes = r->shared_bytes};
        memcpy(gn->l.grid, r->grid, sizeof r->grid);
        memcpy(gn->l.block, r->block, sizeof r->block);
        return 1;
    }
    *gc = (cta_gcopy){.node = r->node};
    gc->cp = (ct_rec_copy){.corr = r->corr, .op = r->node_type == CT_GNODE_MEMSET,
                           .dir = r->dir, .bytes = r->bytes, .src_kind = r->src_kind,
                           .dst_kind = r->dst_kind};
    return r->node_type == CT_GNODE_MEMCPY || r->node_type == CT_GNODE_MEMSET ? 2 : 0;
}

/* A NODE record: a node of the graph the instantiation or update of its call makes an exec run. */
static void listed(struct cta_graph_proc *g, const ct_rec_graph *r, uint32_t kidx)
{
    uint32_t list = list_of(&g->listed, r->corr);
    if (!list) {
        list = new_list(g);
        set_list(&g->listed, r->corr, list);
    }
    cta_gnode gn;
    cta_gcopy gc;
    int kind = node_of(r, kidx, &gn, &gc);
    if (kind == 1)
        *add_kernel(&g->lists[list]) = gn;
    else if (kind == 2)
        *add_copy(&g->lists[list]) = gc;
}

/* The list an instantiation or update r makes its exec run: the nodes its NODE records listed
 * (none known if some were lost), else those the graph was captured with. */
static uint32_t exec_list(struct cta_graph_proc *g, const ct_rec_graph *r)
{
    uint32_t list = list_of(&g->listed, r->corr);
    if (!list)
        return r->nodes ? 0 : list_of(&g->graph_of, r->graph);
    ct_hash_del(&g->listed, r->corr, NULL);
    return g->lists[list].n + g->lists[list].nc == r->nodes ? list : 0;
}

/* A NODE_SET record: exec's node runs something else from now on. The exec's list is changed in
 * place when it is its own and no launch ran it yet (a launch's list must stay what it ran),
 * else copied; setting what the node runs already (new kernel arguments) changes nothing. */
static void node_set(struct cta_graph_proc *g, const ct_rec_graph *r, uint32_t kidx)
{
    if (r->node_type == CT_GNODE_CHANGED) { /* not listed: its launches run unknown work */
        ct_hash_del(&g->exec_of, r->exec, NULL);
        return;
    }
    uint32_t list = list_of(&g->exec_of, r->exec);
    cta_gnode gn;
    cta_gcopy gc;
    int kind = node_of(r, kidx, &gn, &gc);
    if (!list || !kind)
        return;
    const glist *gl = &g->lists[list];
    size_t at = 0, n = kind == 1 ? gl->n : gl->nc;
    while (at < n && (kind == 1 ? gl->v[at].node : gl->c[at].node) != r->node)
        at++;
    if (at == n)
        return; /* not a node of the exec's kernels (or copies) as listed */
    if (kind == 1 ? gl->v[at].kidx == gn.kidx && !memcmp(gl->v[at].l.grid, gn.l.grid,
                                                         sizeof gn.l.grid) &&
                        !memcmp(gl->v[at].l.block, gn.l.block, sizeof gn.l.block) &&
                        gl->v[at].l.shared_bytes == gn.l.shared_bytes
                  : gl->c[at].cp.op == gc.cp.op && gl->c[at].cp.dir == gc.cp.dir &&
                        gl->c[at].cp.bytes == gc.cp.bytes &&
                        gl->c[at].cp.src_kind == gc.cp.src_kind &&
                        gl->c[at].cp.dst_kind == gc.cp.dst_kind)
        return;
    if (gl->owner != r->exec) {
        uint32_t to = new_list(g);
        glist *src = &g->lists[list], *dst = &g->lists[to];
        for (size_t i = 0; i < src->n; i++)
            *add_kernel(dst) = src->v[i];
        for (size_t i = 0; i < src->nc; i++)
            *add_copy(dst) = src->c[i];
        dst->owner = r->exec;
        set_list(&g->exec_of, r->exec, list = to);
    }
    if (kind == 1)
        g->lists[list].v[at] = gn;
    else
        g->lists[list].c[at] = gc;
}

/* An instantiation of the graph whose nodes are list: counted against its shape. */
static void instantiated(struct cta_graph_proc *g, uint32_t list, uint64_t ts, uint64_t host_ns)
{
    g->st.instantiations++;
    g->st.instantiate_ns += host_ns;
    const glist *gl = &g->lists[list];
    if (!gl->n && !gl->nc)
        return;
    /* kernels: name, grid, block; copies and sets: operation, direction, bytes */
    size_t len = (gl->n + gl->nc) * 7 * sizeof(uint32_t);
    uint32_t *key = cta_xmalloc(len, "CUDA graph shapes");
    for (size_t i = 0; i < gl->n; i++) {
        const ct_rec_launch *l = &gl->v[i].l;
        uint32_t k[7] = {gl->v[i].kidx, l->grid[0], l->grid[1], l->grid[2],
                         l->block[0], l->block[1], l->block[2]};
        memcpy(key + 7 * i, k, sizeof k);
    }
    for (size_t i = 0; i < gl->nc; i++) {
        const ct_rec_copy *cp = &gl->c[i].cp;
        uint32_t k[7] = {UINT32_MAX, cp->op, cp->dir, (uint32_t)cp->bytes,
                         (uint32_t)(cp->bytes >> 32), cp->src_kind, cp->dst_kind};
        memcpy(key + 7 * (gl->n + i), k, sizeof k);
    }
    uint32_t s = cta_map_get(&g->shape_idx, key, len, NULL);
    free(key);
    cta_grow(&g->shapes, &g->shapes_cap, (size_t)s + 1, sizeof *g->shapes);
    gshape *sh = &g->shapes[s];
    if (sh->count == 1)
        g->st.repeated_shapes++;
    if (sh->count) {
        if (!g->st.repeated++) {
            g->st.first_repeat = ts - (host_ns < ts ? host_ns : ts);
            g->st.first_repeat_ns = ts - g->st.first_repeat;
        }
        /* all but the most expensive instantiation of the shape */
        g->st.repeat_ns += host_ns < sh->max_ns ? host_ns : sh->max_ns;
    }
    if (host_ns > sh->max_ns)
        sh->max_ns = host_ns;
    sh->count++;
    sh->ns += host_ns;
}

static cta_gnodes nodes_of(const glist *gl)
{
    return (cta_gnodes){gl->v, gl->n, gl->c, gl->nc};
}

cta_gnodes cta_graph_rec(cta_proc *p, const ct_rec_graph *r, uint64_t ts, uint64_t host_ns,
                         uint32_t kidx)
{
    struct cta_graph_proc *g = gp_of(p);
    cta_gnodes none = {0};
    int ok = r->result == 0;
    switch (r->op) {
    case CT_GRAPH_CAPTURE_BEGIN:
        if (ok) {
            cta_grow(&g->caps, &g->caps_cap, g->ncaps + 1, sizeof *g->caps);
            g->caps[g->ncaps++] = (gcapture){r->stream, new_list(g)};
        }
        break;
    case CT_GRAPH_CAPTURE_END:
        for (size_t i = 0; i < g->ncaps; i++)
            if (g->caps[i].stream == r->stream) {
                if (ok && r->graph)
                    set_list(&g->graph_of, r->graph, g->caps[i].list);
                g->caps[i] = g->caps[--g->ncaps];
                break;
            }
        break;
    case CT_GRAPH_NODE:
        listed(g, r, kidx);
        break;
    case CT_GRAPH_INSTANTIATE:
        if (ok && r->exec) {
            uint32_t list = exec_list(g, r);
            set_list(&g->exec_of, r->exec, list);
            instantiated(g, list, ts, host_ns);
        }
        break;
    case CT_GRAPH_UPDATE:
        if (ok) {
            set_list(&g->exec_of, r->exec, exec_list(g, r));
            g->st.updates++;
        }
        break;
    case CT_GRAPH_NODE_SET:
        if (ok)
            node_set(g, r, kidx);
        break;
    case CT_GRAPH_LAUNCH: {
        if (!ok)
            break;
        uint32_t list = list_of(&g->exec_of, r->exec);
        g->st.launches++;
        if (!list) {
            g->st.unknown_launches++;
            break;
        }
        cta_xhash_put(&g->launch_of, r->corr, list, "CUDA graph launches");
        g->lists[list].owner = 0; /* what this launch ran, from now on */
        g->st.launch_kernels += g->lists[list].n;
        g->st.launch_copies += g->lists[list].nc;
        return nodes_of(&g->lists[list]);
    }
    case CT_GRAPH_EXEC_DESTROY:
        if (ok)
            ct_hash_del(&g->exec_of, r->exec, NULL);
        break;
    case CT_GRAPH_DESTROY:
        if (ok)
            ct_hash_del(&g->graph_of, r->graph, NULL);
        break;
    default:
        break;
    }
    return none;
}

cta_gnodes cta_graph_launch_nodes(const cta_proc *p, uint64_t corr)
{
    const struct cta_graph_proc *g = p->feat[CTA_FEAT_GRAPH];
    const uint32_t *v = g ? ct_hash_find(&g->launch_of, corr) : NULL;
    return v ? nodes_of(&g->lists[*v]) : (cta_gnodes){0};
}

cta_graph_stats cta_graph_stats_of(const cta_proc *p)
{
    const struct cta_graph_proc *g = p->feat[CTA_FEAT_GRAPH];
    return g ? g->st : (cta_graph_stats){0};
}

void cta_graph_proc_free(cta_proc *p)
{
    struct cta_graph_proc *g = p->feat[CTA_FEAT_GRAPH];
    if (!g)
        return;
    for (size_t i = 0; i < g->nlists; i++) {
        free(g->lists[i].v);
        free(g->lists[i].c);
    }
    free(g->lists);
    free(g->caps);
    ct_hash_free(&g->graph_of);
    ct_hash_free(&g->exec_of);
    ct_hash_free(&g->launch_of);
    ct_hash_free(&g->listed);
    cta_map_free(&g->shape_idx);
    free(g->shapes);
    free(g);
    p->feat[CTA_FEAT_GRAPH] = NULL;
}

/* A graph launch's GRAPH record: the kernels, copies and sets it ran are instances of theirs,
 * whose GPU time is unknown (events time the graph as a whole: its LAUNCH record's GPU
 * interval), so untimed in the kernel and copy tables, never given a share of the graph's time. */
static void graph_record(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_graph *g = &r->u.graph;
    cta_thread *th = cta_thread_of(p, r->tid);
    uint64_t host_ns = th->last_api_corr == g->corr ? th->last_api_ns : 0;
    uint32_t kidx = (g->op == CT_GRAPH_NODE || g->op == CT_GRAPH_NODE_SET) &&
                            g->node_type == CT_GNODE_KERNEL
                        ? cta_name_index(m, r->file, g->function, 0)
                        : 0;
    cta_gnodes ran = cta_graph_rec(p, g, r->ts, host_ns, kidx);
    for (size_t i = 0; i < ran.n; i++)
        cta_model_graph_kernel(m, ran.v[i].kidx, &ran.v[i].l);
    for (size_t i = 0; i < ran.nc; i++)
        cta_model_graph_copy(m, &ran.c[i].cp);
}

static void graph_captured(cta_model *m, cta_proc *p, const ct_rec *r, uint32_t kidx)
{
    (void)m;
    if (r->type == CT_REC_LAUNCH)
        cta_graph_captured(p, &r->u.launch, kidx);
    else
        cta_graph_captured_copy(p, &r->u.copy);
}

/* Its line in the Run section: what the kernel table counts of graphs, and what it cannot. */
static void graph_text(FILE *f, const cta_proc *p)
{
    cta_graph_stats gs = cta_graph_stats_of(p);
    if (gs.launches) {
        fprintf(f, "    CUDA graphs: %llu launches running %llu kernels and %llu copies and "
                "sets, %llu instantiations, %llu exec updates", (unsigned long long)gs.launches,
                (unsigned long long)gs.launch_kernels, (unsigned long long)gs.launch_copies,
                (unsigned long long)gs.instantiations, (unsigned long long)gs.updates);
        if (gs.unknown_launches)
            fprintf(f, "; %llu launches of graphs whose nodes the trace does not name "
                       "(instantiated before the trace began, their node records lost, or "
                       "written without format 1.7's node list): their kernels are not "
                       "counted",
                    (unsigned long long)gs.unknown_launches);
        fputc('\n', f);
    }
}

/* Its "graphs" object, after "capture" (only with graphs: other traces' output stays as it
 * was). */
static void graph_json(cta_json *j, const cta_proc *p)
{
    cta_graph_stats gs = cta_graph_stats_of(p);
    if (gs.launches || gs.instantiations) {
        cta_json_key(j, "graphs");
        cta_json_obj(j);
        CTA_JK_U64(j, "launches", gs.launches);
        CTA_JK_U64(j, "launch_kernels", gs.launch_kernels);
        CTA_JK_U64(j, "launch_copies", gs.launch_copies);
        CTA_JK_U64(j, "unknown_launches", gs.unknown_launches);
        CTA_JK_U64(j, "instantiations", gs.instantiations);
        CTA_JK_U64(j, "updates", gs.updates);
        cta_json_end_obj(j);
    }
}

const cta_feature cta_graph_feature = {
    .name = "graph",
    .types = 1ull << CT_REC_GRAPH,
    .record = graph_record,
    .captured = graph_captured,
    .proc_free = cta_graph_proc_free,
    .proc_at = CTA_AT_PROC_CAPTURE,
    .proc_text = graph_text,
    .proc_json = graph_json,
};
