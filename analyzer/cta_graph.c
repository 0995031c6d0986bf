/* CUDA graphs of a process (see cta_graph.h). */
#include "cta_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cta_map.h"

typedef struct {
    cta_gnode *v;
    size_t n, cap;
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
    cta_map shape_idx;            /* a list's nodes (kernel and configuration) -> shape */
    gshape *shapes;
    size_t shapes_cap;
    cta_graph_stats st;
};

static struct cta_graph_proc *gp_of(cta_proc *p)
{
    if (!p->graphs) {
        p->graphs = cta_xmalloc(sizeof *p->graphs, "CUDA graphs");
        cta_map_init(&p->graphs->shape_idx);
        p->graphs->nlists = 1;
        cta_grow(&p->graphs->lists, &p->graphs->lists_cap, 1, sizeof *p->graphs->lists);
    }
    return p->graphs;
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

void cta_graph_captured(cta_proc *p, const ct_rec_launch *l, uint32_t kidx)
{
    struct cta_graph_proc *g = gp_of(p);
    gcapture *c = capture_of(g, l->stream);
    if (!c)
        return;
    glist *gl = &g->lists[c->list];
    cta_grow(&gl->v, &gl->cap, gl->n + 1, sizeof *gl->v);
    gl->v[gl->n++] = (cta_gnode){.kidx = kidx, .l = *l};
}

/* An instantiation of the graph whose nodes are list: counted against its shape. */
static void instantiated(struct cta_graph_proc *g, uint32_t list, uint64_t host_ns)
{
    g->st.instantiations++;
    g->st.instantiate_ns += host_ns;
    const glist *gl = &g->lists[list];
    if (!gl->n)
        return;
    size_t len = gl->n * 7 * sizeof(uint32_t);
    uint32_t *key = cta_xmalloc(len, "CUDA graph shapes");
    for (size_t i = 0; i < gl->n; i++) {
        const ct_rec_launch *l = &gl->v[i].l;
        uint32_t k[7] = {gl->v[i].kidx, l->grid[0], l->grid[1], l->grid[2],
                         l->block[0], l->block[1], l->block[2]};
        memcpy(key + 7 * i, k, sizeof k);
    }
    uint32_t s = cta_map_get(&g->shape_idx, key, len, NULL);
    free(key);
    cta_grow(&g->shapes, &g->shapes_cap, (size_t)s + 1, sizeof *g->shapes);
    gshape *sh = &g->shapes[s];
    if (sh->count == 1)
        g->st.repeated_shapes++;
    if (sh->count) {
        g->st.repeated++;
        /* all but the most expensive instantiation of the shape */
        g->st.repeat_ns += host_ns < sh->max_ns ? host_ns : sh->max_ns;
    }
    if (host_ns > sh->max_ns)
        sh->max_ns = host_ns;
    sh->count++;
    sh->ns += host_ns;
}

cta_gnodes cta_graph_rec(cta_proc *p, const ct_rec_graph *r, uint64_t host_ns)
{
    struct cta_graph_proc *g = gp_of(p);
    cta_gnodes none = {NULL, 0};
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
    case CT_GRAPH_INSTANTIATE:
        if (ok && r->exec) {
            uint32_t list = list_of(&g->graph_of, r->graph);
            set_list(&g->exec_of, r->exec, list);
            instantiated(g, list, host_ns);
        }
        break;
    case CT_GRAPH_UPDATE:
        if (ok) {
            set_list(&g->exec_of, r->exec, list_of(&g->graph_of, r->graph));
            g->st.updates++;
        }
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
        g->st.launch_kernels += g->lists[list].n;
        return (cta_gnodes){g->lists[list].v, g->lists[list].n};
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
    const struct cta_graph_proc *g = p->graphs;
    const uint32_t *v = g ? ct_hash_find(&g->launch_of, corr) : NULL;
    return v ? (cta_gnodes){g->lists[*v].v, g->lists[*v].n} : (cta_gnodes){NULL, 0};
}

cta_graph_stats cta_graph_stats_of(const cta_proc *p)
{
    return p->graphs ? p->graphs->st : (cta_graph_stats){0};
}

void cta_graph_proc_free(cta_proc *p)
{
    struct cta_graph_proc *g = p->graphs;
    if (!g)
        return;
    for (size_t i = 0; i < g->nlists; i++)
        free(g->lists[i].v);
    free(g->lists);
    free(g->caps);
    ct_hash_free(&g->graph_of);
    ct_hash_free(&g->exec_of);
    ct_hash_free(&g->launch_of);
    cta_map_free(&g->shape_idx);
    free(g->shapes);
    free(g);
    p->graphs = NULL;
}
