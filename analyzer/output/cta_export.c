/* The export's rows (cta_export.h). */
#include "cta_export.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_kineto_open.h"
#include "cta_load.h"
#include "cta_report_common.h"
#include "cta_names.h"

/* The files are modelled at once (cta_load_run_jobs) but their rows are written one file after
 * another, in file order, so that the output (StringIds numbered as texts first come, the rows'
 * order) is the same for any number of jobs. The file whose turn it is (ex.turn) writes its rows
 * as they come, on its worker; another file's rows wait in its buffer, at most EX_BUF_MAX bytes
 * (past that, and when its model is done, its worker waits for its turn), so memory grows with
 * the jobs, not the files. The turn passes on when the merging thread takes a file's model
 * (export_end), and only then: whoever writes holds it, so the writer is one thread at a time. */
#define EX_BUF_MAX ((size_t)4 << 20)
#define EX_MAX_COLS 32

typedef struct {
    cta_tables *t;
    const ct_reader *rd;
    uint64_t base;
    int failed;                   /* a write failed (read by workers: atomic) */
    cta_map stacks;               /* (file, stack index) -> index in site_ids */
    int64_t (*site_ids)[2];       /* StringIds of its site and full stack */
    size_t site_cap;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t turn;                /* the file whose rows are written now (atomic) */
    int aborted;                  /* the pass failed: nobody waits for a turn */
} ex;

/* One file's rows, as its model observes them. */
typedef struct {
    ex *x;
    uint32_t file;
    const cta_model *m;           /* its partial model */
    int direct;                   /* its turn came: rows are written as they come */
    int failed;
    uint8_t *q;                   /* rows waiting for its turn (row_save) */
    size_t qlen, qcap;
} exf;

static int64_t rel(const ex *x, uint64_t ns) { return (int64_t)(ns - x->base); }

/* Nsight Systems' serialized ids (its "Serialized process and thread identifiers"): pid in bits
 * 24-47, tid in bits 0-23; the trace's index in bits 48-62 keeps processes of different hosts
 * with one pid apart, so `(globalPid >> 24) & 0xFFFFFF` is still the pid. */
static int64_t gpid(const cta_proc *p) { return (int64_t)(((uint64_t)(p->file & 0x7FFF) << 48) | ((uint64_t)(p->pid & 0xFFFFFF) << 24)); }
static int64_t gtid(const cta_proc *p, uint32_t tid) { return gpid(p) | (tid & 0xFFFFFF); }

static int ex_failed(ex *x) { return __atomic_load_n(&x->failed, __ATOMIC_RELAXED); }
static void ex_fail(ex *x) { __atomic_store_n(&x->failed, 1, __ATOMIC_RELAXED); }

static void put(ex *x, int table, uint32_t file, const cta_val *row)
{
    if (!ex_failed(x) && cta_tables_put(x->t, table, file, row) != 0)
        ex_fail(x);
}

static cta_val str(ex *x, const char *s)
{
    if (!s)
        return (cta_val){0};
    int64_t id = cta_tables_string(x->t, s);
    if (id < 0) {
        ex_fail(x);
        return (cta_val){0};
    }
    return cta_vi(id);
}

/* The StringIds id of a call site (as the summary names it) or of its full stack, resolved once
 * per stack. */
static cta_val site_id(ex *x, const cta_model *m, const cta_proc *p, uint32_t stack, int full)
{
    uint32_t key[2] = {p->file, stack};
    int added;
    uint32_t i = cta_map_get(&x->stacks, key, sizeof key, &added);
    if (added) {
        char s[1024], st[CTA_FULL_STACK_LEN];
        cta_model_site_text(m, p, stack, s, sizeof s, CTA_FULL_STACK_FRAMES);
        cta_model_stack_text(m, p, stack, st, sizeof st, CTA_FULL_STACK_FRAMES);
        cta_grow(&x->site_ids, &x->site_cap, i + 1, sizeof *x->site_ids);
        x->site_ids[i][0] = str(x, s).i;
        x->site_ids[i][1] = str(x, st).i;
    }
    return cta_vi(x->site_ids[i][full]);
}

/* Values an observer leaves to the writer, which numbers them in file order: a text's StringIds
 * id, a call site's and a full stack's (stack index in .i). */
#define EX_V_STRID ((int)CTA_V_TEXT + 1)
#define EX_V_SITE ((int)CTA_V_TEXT + 2)
#define EX_V_STACK ((int)CTA_V_TEXT + 3)
static cta_val strid(const char *s) { return s ? (cta_val){.kind = EX_V_STRID, .s = s} : (cta_val){0}; }
static cta_val site_of(uint32_t stack, int full)
{
    return stack ? (cta_val){.kind = full ? EX_V_STACK : EX_V_SITE, .i = stack} : (cta_val){0};
}

/* Writes a row of e's file (its turn), resolving the values left to the writer. */
static void row_write(exf *e, int table, cta_val *row)
{
    ex *x = e->x;
    const cta_proc *p = &e->m->procs[0];
    for (int c = 0; c < cta_table_ncols(table); c++) {
        if (row[c].kind == EX_V_STRID)
            row[c] = str(x, row[c].s);
        else if (row[c].kind == EX_V_SITE || row[c].kind == EX_V_STACK)
            row[c] = site_id(x, e->m, p, (uint32_t)row[c].i, row[c].kind == EX_V_STACK);
    }
    put(x, table, e->file, row);
}

static void q_add(exf *e, const void *v, size_t n)
{
    cta_grow(&e->q, &e->qcap, e->qlen + n, 1);
    memcpy(e->q + e->qlen, v, n);
    e->qlen += n;
}

/* A row kept until e's turn: table, then each column's kind and value, texts copied. */
static void row_save(exf *e, int table, const cta_val *row)
{
    q_add(e, &table, sizeof table);
    for (int c = 0; c < cta_table_ncols(table); c++) {
        uint8_t k = (uint8_t)row[c].kind;
        q_add(e, &k, 1);
        if (k == CTA_V_INT || k == EX_V_SITE || k == EX_V_STACK)
            q_add(e, &row[c].i, sizeof row[c].i);
        else if (k == CTA_V_REAL)
            q_add(e, &row[c].d, sizeof row[c].d);
        else if (k == CTA_V_TEXT || k == EX_V_STRID)
            q_add(e, row[c].s, strlen(row[c].s) + 1);
    }
}

/* Writes the rows kept (e's turn has come). */
static void rows_flush(exf *e)
{
    for (size_t at = 0; at < e->qlen;) {
        int table;
        memcpy(&table, e->q + at, sizeof table);
        at += sizeof table;
        cta_val row[EX_MAX_COLS] = {{0}};
        for (int c = 0; c < cta_table_ncols(table); c++) {
            uint8_t k = e->q[at++];
            row[c].kind = k;
            if (k == CTA_V_INT || k == EX_V_SITE || k == EX_V_STACK) {
                memcpy(&row[c].i, e->q + at, sizeof row[c].i);
                at += sizeof row[c].i;
            } else if (k == CTA_V_REAL) {
                memcpy(&row[c].d, e->q + at, sizeof row[c].d);
                at += sizeof row[c].d;
            } else if (k == CTA_V_TEXT || k == EX_V_STRID) {
                row[c].s = (const char *)e->q + at;
                at += strlen(row[c].s) + 1;
            }
        }
        row_write(e, table, row);
    }
    e->qlen = 0;
}

/* Waits for e's turn and writes what it kept; from then on its rows are written as they come.
 * When the pass failed instead, its rows are dropped. */
static void turn_wait(exf *e)
{
    ex *x = e->x;
    pthread_mutex_lock(&x->mu);
    while (x->turn != e->file && !x->aborted)
        pthread_cond_wait(&x->cv, &x->mu);
    int go = !x->aborted;
    pthread_mutex_unlock(&x->mu);
    if (go) {
        rows_flush(e);
        e->direct = 1;
    } else {
        e->qlen = 0;
        e->failed = 1;
    }
}

/* A row of e's file, as its model observes it. */
static void emit(exf *e, int table, const cta_val *row)
{
    if (!e->direct && __atomic_load_n(&e->x->turn, __ATOMIC_ACQUIRE) == e->file) {
        rows_flush(e);
        e->direct = 1;
    }
    if (e->direct) {
        cta_val r[EX_MAX_COLS];
        memcpy(r, row, (size_t)cta_table_ncols(table) * sizeof *r);
        row_write(e, table, r);
        return;
    }
    row_save(e, table, row);
    if (e->qlen >= EX_BUF_MAX)
        turn_wait(e);
}

static const char *const layer_names[] = {"runtime", "driver", "library"};

static void on_api(void *ctx, cta_proc *p, const ct_rec *r, const char *name, uint32_t stack)
{
    exf *e = ctx;
    ex *x = e->x;
    const ct_rec_api *a = &r->u.api;
    uint64_t start = a->start <= r->ts ? a->start : r->ts;
    int layer = (a->flags & CT_API_DRIVER) ? 1 : (a->flags & CT_API_LIBRARY) ? 2 : 0;
    cta_val row[CTA_RUNTIME_NCOLS] = {
        [CTA_RUNTIME_start] = cta_vi(rel(x, start)), [CTA_RUNTIME_end] = cta_vi(rel(x, r->ts)),
        [CTA_RUNTIME_globalTid] = cta_vi(gtid(p, r->tid)), [CTA_RUNTIME_correlationId] = cta_vi((int64_t)a->corr),
        [CTA_RUNTIME_nameId] = strid(name), [CTA_RUNTIME_returnValue] = cta_vi(a->result),
        [CTA_RUNTIME_layer] = cta_vs(layer_names[layer])};
    row[CTA_RUNTIME_siteId] = site_of(stack, 0);
    emit(e, CTA_TAB_RUNTIME, row);
}

/* CUPTI's CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind (ENUM_CUDA_MEMCPY_OPER,
 * ENUM_CUDA_MEM_KIND) from the trace's ct_copy_dir and ct_mem_kind. */
static const struct { int id; const char *name, *label; } copy_kinds[] = {
    {0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"}, {1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"}, {3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_OPER_ATOH", "Array-to-Host"}, {5, "CUDA_MEMCPY_OPER_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_OPER_ATOD", "Array-to-Device"}, {7, "CUDA_MEMCPY_OPER_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"}, {9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer"}};
static const struct { int id; const char *name, *label; } mem_kinds[] = {
    {0, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"}, {1, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
    {2, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"}, {3, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
    {4, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"}, {5, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"}};
static int copy_kind(uint32_t dir)
{
    static const int k[] = {[CT_DIR_UNKNOWN] = 0, [CT_DIR_HTOD] = 1, [CT_DIR_DTOH] = 2,
                            [CT_DIR_DTOD] = 8, [CT_DIR_HTOH] = 9, [CT_DIR_PEER] = 10};
    return dir < sizeof k / sizeof *k ? k[dir] : 0;
}
static int mem_kind(uint32_t kind)
{
    static const int k[] = {[CT_MEMKIND_UNKNOWN] = 0, [CT_MEMKIND_PAGEABLE] = 1, [CT_MEMKIND_PINNED] = 2,
                            [CT_MEMKIND_DEVICE] = 3, [CT_MEMKIND_MANAGED] = 5, [CT_MEMKIND_ARRAY] = 4};
    return kind < sizeof k / sizeof *k ? k[kind] : 0;
}

/* nsys's shortName: the function's own name, without its scope, template arguments, parameters
 * and return type ("void ns::scale<float>(float*, int)" -> "scale"); of a name the trace holds
 * cut (FORMAT.md 4.1), from what is left of it, which may end inside its template arguments. */
static void short_name(const char *name, char *buf, size_t len)
{
    uint64_t full;
    size_t n = ct_string_cut_at(name, strlen(name), &full), end = n, open = 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) { /* the parameter list: the first '(' outside <> */
        if (name[i] == '<') {
            open = depth++ ? open : i;
        } else if (name[i] == '>' && depth) {
            depth--;
        } else if (name[i] == '(' && !depth && i) {
            end = i;
            break;
        }
    }
    if (depth && end == n) /* cut inside the template arguments opened at `open` */
        end = open;
    while (end && name[end - 1] == '>') { /* template arguments of the function itself */
        size_t i = end - 1;
        for (depth = 0; i > 0; i--) {
            depth += name[i] == '>' ? 1 : name[i] == '<' ? -1 : 0;
            if (!depth)
                break;
        }
        end = i;
    }
    size_t start = end;
    while (start && name[start - 1] != ' ' && name[start - 1] != ':')
        start--;
    snprintf(buf, len, "%.*s", (int)(end - start), name + start);
}

/* The columns the three GPU tables share, first in each and in the same order. */
#define SAME3(col) ((int)CTA_KERNEL_##col == (int)CTA_MEMCPY_##col && (int)CTA_MEMCPY_##col == (int)CTA_MEMSET_##col)
_Static_assert(SAME3(start) && SAME3(end) && SAME3(deviceId) && SAME3(contextId) && SAME3(streamId) &&
               SAME3(correlationId) && SAME3(globalPid), "the GPU tables' first columns differ");
#undef SAME3

static void on_gpu(void *ctx, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c)
{
    exf *e = ctx;
    ex *x = e->x;
    uint64_t start = g->start <= end ? g->start : end;
    cta_val row[(int)CTA_KERNEL_NCOLS > (int)CTA_MEMCPY_NCOLS ? (int)CTA_KERNEL_NCOLS : (int)CTA_MEMCPY_NCOLS] = {
        [CTA_KERNEL_start] = cta_vi(rel(x, start)), [CTA_KERNEL_end] = cta_vi(rel(x, end)),
        [CTA_KERNEL_deviceId] = cta_vi(g->device), [CTA_KERNEL_streamId] = cta_vi((int64_t)g->stream),
        [CTA_KERNEL_correlationId] = cta_vi((int64_t)g->corr), [CTA_KERNEL_globalPid] = cta_vi(gpid(p))};
    cta_val bound = cta_vi(g->flags & CT_GPU_END_BOUND ? 1 : 0);
    char sn[512]; /* the row's texts live until it is written */
    if (g->kind == CT_GPU_KERNEL) {
        row[CTA_KERNEL_endIsUpperBound] = bound;
        if (c->is_launch) {
            const ct_rec_launch *l = c->launch;
            short_name(c->kernel_name, sn, sizeof sn);
            row[CTA_KERNEL_demangledName] = strid(c->kernel_name);
            row[CTA_KERNEL_shortName] = strid(sn);
            row[CTA_KERNEL_mangledName] = strid(ct_reader_string(x->rd, p->file, l->symbol ? l->symbol : l->function));
            row[CTA_KERNEL_contextId] = cta_vi((int64_t)l->context);
            const uint32_t *cfg[6] = {&l->grid[0], &l->grid[1], &l->grid[2],
                                      &l->block[0], &l->block[1], &l->block[2]};
            for (int i = 0; i < 6; i++)
                row[CTA_KERNEL_gridX + i] = cta_vi(*cfg[i]);
            row[CTA_KERNEL_dynamicSharedMemory] = cta_vi(l->shared_bytes);
        }
        emit(e, CTA_TAB_KERNEL, row);
    } else if (g->kind == CT_GPU_MEMCPY) {
        row[CTA_MEMCPY_endIsUpperBound] = bound;
        if (c->is_copy) {
            const ct_rec_copy *cp = c->copy;
            row[CTA_MEMCPY_bytes] = cta_vi((int64_t)cp->bytes);
            row[CTA_MEMCPY_copyKind] = cta_vi(copy_kind(cp->dir));
            row[CTA_MEMCPY_srcKind] = cta_vi(mem_kind(cp->src_kind));
            row[CTA_MEMCPY_dstKind] = cta_vi(mem_kind(cp->dst_kind));
            if (cp->dir == CT_DIR_PEER) {
                row[CTA_MEMCPY_srcDeviceId] = cta_vi(cp->device);
                row[CTA_MEMCPY_dstDeviceId] = cta_vi(cp->peer_device);
            }
        }
        emit(e, CTA_TAB_MEMCPY, row);
    } else if (g->kind == CT_GPU_MEMSET) {
        row[CTA_MEMSET_endIsUpperBound] = bound;
        if (c->is_copy) {
            row[CTA_MEMSET_bytes] = cta_vi((int64_t)c->copy->bytes);
            row[CTA_MEMSET_memKind] = cta_vi(mem_kind(c->copy->dst_kind));
        }
        emit(e, CTA_TAB_MEMSET, row);
    }
}

/* nsys's NVTX_EVENTS eventType: NvtxMark 34, NvtxPushPopRange 59, NvtxStartEndRange 60. */
static void on_nvtx(void *ctx, cta_proc *p, const ct_rec *r)
{
    exf *e = ctx;
    ex *x = e->x;
    cta_val row[CTA_NVTX_NCOLS] = {[CTA_NVTX_end] = cta_vi(rel(x, r->ts))};
    uint32_t domain, name, group, category, color, payload_kind, flags;
    uint64_t payload;
    if (r->type == CT_REC_NVTX_RANGE) {
        const ct_rec_nvtx_range *n = &r->u.nvtx_range;
        if (n->flags & CT_NVTX_UNMATCHED) /* a pop or end with nothing open: no range */
            return;
        row[CTA_NVTX_start] = cta_vi(rel(x, n->start <= r->ts ? n->start : r->ts));
        row[CTA_NVTX_eventType] = cta_vi(n->kind == CT_NVTX_START_END ? 60 : 59);
        if (n->kind == CT_NVTX_START_END)
            row[CTA_NVTX_rangeId] = cta_vi((int64_t)n->id);
        row[CTA_NVTX_globalTid] = cta_vi(gtid(p, n->start_tid));
        row[CTA_NVTX_endGlobalTid] = cta_vi(gtid(p, n->end_tid));
        domain = n->domain, name = n->name, group = n->group, category = n->category;
        color = n->color, payload_kind = n->payload_kind, payload = n->payload, flags = n->flags;
    } else if (r->type == CT_REC_NVTX_MARK) {
        const ct_rec_nvtx_mark *n = &r->u.nvtx_mark;
        if (n->flags & (CT_NVTX_CATEGORY_NAME | CT_NVTX_THREAD_NAME)) /* names, not events */
            return;
        row[CTA_NVTX_start] = row[CTA_NVTX_end];
        row[CTA_NVTX_end] = (cta_val){0};
        row[CTA_NVTX_eventType] = cta_vi(34);
        row[CTA_NVTX_globalTid] = cta_vi(gtid(p, r->tid));
        domain = n->domain, name = n->name, group = n->group, category = n->category;
        color = n->color, payload_kind = n->payload_kind, payload = n->payload, flags = n->flags;
    } else {
        return;
    }
    /* a message the tracer did not keep (past its bound of names) by its normalized form */
    const char *text = ct_reader_string(x->rd, p->file, name ? name : group);
    row[CTA_NVTX_text] = cta_vs(name || group ? text : NULL);
    if (category)
        row[CTA_NVTX_category] = cta_vi(category);
    if (flags & CT_NVTX_COLOR)
        row[CTA_NVTX_color] = cta_vi(color);
    row[CTA_NVTX_domainId] = cta_vi(domain);
    if (domain)
        row[CTA_NVTX_domain] = cta_vs(ct_reader_string(x->rd, p->file, domain));
    /* nvtxPayloadType_t: 1 uint64, 2 int64, 3 double, 4 uint32, 5 int32, 6 float */
    switch (payload_kind) {
    case 1: row[CTA_NVTX_uint64Value] = cta_vi((int64_t)payload); break;
    case 2: row[CTA_NVTX_int64Value] = cta_vi((int64_t)payload); break;
    case 3: { double d; memcpy(&d, &payload, sizeof d); row[CTA_NVTX_doubleValue] = cta_vr(d); break; }
    case 4: row[CTA_NVTX_uint32Value] = cta_vi((uint32_t)payload); break;
    case 5: row[CTA_NVTX_int32Value] = cta_vi((int32_t)(uint32_t)payload); break;
    case 6: { float f; uint32_t b = (uint32_t)payload; memcpy(&f, &b, sizeof f); row[CTA_NVTX_floatValue] = cta_vr(f); break; }
    }
    emit(e, CTA_TAB_NVTX, row);
}

static const char *alloc_kind(uint32_t k)
{
    static const char *const n[] = {"unknown", "device", "pinned", "managed", "pool", "vmm-physical",
                                    "vmm-map", "vmm-reserve"};
    return k < sizeof n / sizeof *n ? n[k] : "unknown";
}

/* cta_observer.on_record: a MEM record, once the model has read it (its stack is then indexed
 * in the process), is a row; a failed write stops the pass */
static int on_record(void *ctx, const ct_rec *r)
{
    exf *e = ctx;
    ex *x = e->x;
    const cta_model *m = e->m;
    if (r->type != CT_REC_MEM || r->file - m->file0 >= m->nprocs)
        return e->failed || ex_failed(x);
    const cta_proc *p = &m->procs[r->file - m->file0];
    const ct_rec_mem *mr = &r->u.mem;
    cta_val row[CTA_ALLOCS_NCOLS] = {
        [CTA_ALLOCS_time] = cta_vi(rel(x, r->ts)), [CTA_ALLOCS_globalTid] = cta_vi(gtid(p, r->tid)),
        [CTA_ALLOCS_globalPid] = cta_vi(gpid(p)), [CTA_ALLOCS_correlationId] = cta_vi((int64_t)mr->corr),
        [CTA_ALLOCS_operation] = cta_vs(mr->op == CT_MEM_FREE ? "free" : "alloc"),
        [CTA_ALLOCS_kind] = cta_vs(alloc_kind(mr->kind)), [CTA_ALLOCS_deviceId] = cta_vi(mr->device),
        [CTA_ALLOCS_address] = cta_vi((int64_t)mr->address), [CTA_ALLOCS_bytes] = cta_vi((int64_t)mr->size),
        [CTA_ALLOCS_result] = cta_vi(mr->result)};
    uint32_t idx = mr->stack ? cta_map_find(&p->stack_idx, &mr->stack, sizeof mr->stack) : UINT32_MAX;
    if (idx != UINT32_MAX)
        row[CTA_ALLOCS_siteId] = site_of(idx + 1, 0), row[CTA_ALLOCS_stackId] = site_of(idx + 1, 1);
    emit(e, CTA_TAB_ALLOCS, row);
    return e->failed || ex_failed(x);
}

/* ---- the files' rows, in file order (cta_file_observers) ---- */

static void *export_begin(void *ctx, uint32_t file, const cta_model *part, cta_observer *obs)
{
    exf *e = cta_xmalloc(sizeof *e, "a file's rows");
    *e = (exf){.x = ctx, .file = file, .m = part};
    *obs = (cta_observer){.ctx = e, .on_api = on_api, .on_gpu = on_gpu, .on_nvtx = on_nvtx,
                          .on_record = on_record};
    return e;
}

/* The file's model is done: the rows it kept wait for its turn here, not in memory while the
 * worker models other files. */
static void export_done(void *ctx, void *state)
{
    (void)ctx;
    exf *e = state;
    if (e->qlen)
        turn_wait(e);
}

static int export_end(void *ctx, uint32_t file, void *state, const cta_model *m, const cta_model *part)
{
    (void)part;
    ex *x = ctx;
    exf *e = state;
    int bad = 0;
    if (m) {
        if (!e->failed)
            rows_flush(e); /* the file's turn is now, as the previous file is done */
        bad = e->failed || ex_failed(x);
    }
    pthread_mutex_lock(&x->mu);
    __atomic_store_n(&x->turn, file + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    free(e->q);
    free(e);
    return bad;
}

static void export_abort(void *ctx)
{
    ex *x = ctx;
    pthread_mutex_lock(&x->mu);
    x->aborted = 1;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

/* CUTRACE_BREAKDOWN's row of a device of p (cta_report_breakdowns). */
static void breakdown_row(void *ctx, const cta_proc *p, int d, uint64_t untimed, const cta_breakdown *b)
{
    ex *x = ctx;
    const cta_dev *dv = &p->dev[d];
    cta_val r[CTA_BREAKDOWN_NCOLS] = {
        [CTA_BREAKDOWN_globalPid] = cta_vi(gpid(p)), [CTA_BREAKDOWN_pid] = cta_vi(p->pid),
        [CTA_BREAKDOWN_deviceId] = cta_vi(d), [CTA_BREAKDOWN_gpuOperations] = cta_vi((int64_t)dv->gpu_ops),
        [CTA_BREAKDOWN_gpuUntimedOperations] = cta_vi((int64_t)untimed),
        [CTA_BREAKDOWN_complete] = cta_vi(!untimed)};
    if (!untimed) { /* busy and idle would count the untimed work as idle */
        const int64_t v[] = {rel(x, dv->first_gpu), (int64_t)b->window, (int64_t)b->busy,
                             (int64_t)b->idle, (int64_t)b->busy_bounded, (int64_t)b->host.in_api,
                             (int64_t)b->host.blocked, (int64_t)b->host.compute,
                             (int64_t)b->host.wait, (int64_t)b->host.unknown};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++)
            r[CTA_BREAKDOWN_windowStart + k] = cta_vi(v[k]);
    }
    put(x, CTA_TAB_BREAKDOWN, p->file, r);
}

static void summary_tables(ex *x, const cta_model *m, const cta_diag *dg, int ndiag)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_breakdown b;
        int known = cta_report_proc_breakdown(p, &b) && b.window;
        char ended[160];
        cta_val row[CTA_PROCESSES_NCOLS] = {
            [CTA_PROCESSES_globalPid] = cta_vi(gpid(p)), [CTA_PROCESSES_pid] = cta_vi(p->pid),
            [CTA_PROCESSES_host] = cta_vs(p->host), [CTA_PROCESSES_command] = cta_vs(p->command),
            [CTA_PROCESSES_file] = cta_vs(cta_kineto_display_path(m->rd, p->file)),
            [CTA_PROCESSES_complete] = cta_vi(p->ended),
            [CTA_PROCESSES_ended] = cta_vs(cta_end_text(m, p, ended, sizeof ended)),
            [CTA_PROCESSES_peakVramBytes] = cta_vi((int64_t)cta_report_proc_peak(p)),
            [CTA_PROCESSES_topKernel] = cta_vs(p->top_kernel[0] ? p->top_kernel : NULL)};
        if (p->rank >= 0)
            row[CTA_PROCESSES_rank] = cta_vi(p->rank);
        if (p->t_first != UINT64_MAX) {
            row[CTA_PROCESSES_start] = cta_vi(rel(x, p->t_first));
            row[CTA_PROCESSES_end] = cta_vi(rel(x, p->t_last));
        }
        if (known) {
            row[CTA_PROCESSES_gpuBusyPct] = cta_vr(100.0 * (double)b.busy / (double)b.window);
            row[CTA_PROCESSES_gpuIdlePct] = cta_vr(100.0 * (double)b.idle / (double)b.window);
        }
        put(x, CTA_TAB_PROCESSES, p->file, row);
        cta_report_breakdowns(p, breakdown_row, x);
    }
    for (int i = 0; i < ndiag; i++) {
        const cta_diag *d = &dg[i];
        cta_val row[CTA_DIAG_NCOLS] = {
            [CTA_DIAG_id] = cta_vi(i + 1), [CTA_DIAG_diagnosis] = cta_vs(d->id), [CTA_DIAG_severity] = cta_vs(d->severity),
            [CTA_DIAG_globalPid] = cta_vi(gpid(d->proc)), [CTA_DIAG_pid] = cta_vi(d->proc->pid),
            [CTA_DIAG_savingNs] = cta_vi((int64_t)d->saving_ns), [CTA_DIAG_windowNs] = cta_vi((int64_t)d->window_ns),
            [CTA_DIAG_message] = cta_vs(d->message), [CTA_DIAG_fix] = cta_vs(d->fix)};
        if (d->dev >= 0)
            row[CTA_DIAG_deviceId] = cta_vi(d->dev);
        if (d->at.set) {
            row[CTA_DIAG_atStart] = cta_vi(rel(x, d->at.start));
            row[CTA_DIAG_atEnd] = cta_vi(rel(x, d->at.end));
        }
        put(x, CTA_TAB_DIAG, d->proc->file, row);
    }
    for (size_t i = 0; i < m->nprocs && !x->failed; i++)
        if (cta_tables_trace_done(x->t, m->procs[i].file) != 0)
            ex_fail(x);
}

static void enum_tables(ex *x)
{
    for (size_t i = 0; i < sizeof copy_kinds / sizeof *copy_kinds; i++) {
        cta_val row[3] = {cta_vi(copy_kinds[i].id), cta_vs(copy_kinds[i].name), cta_vs(copy_kinds[i].label)};
        put(x, CTA_TAB_COPYKIND, 0, row);
    }
    for (size_t i = 0; i < sizeof mem_kinds / sizeof *mem_kinds; i++) {
        cta_val row[3] = {cta_vi(mem_kinds[i].id), cta_vs(mem_kinds[i].name), cta_vs(mem_kinds[i].label)};
        put(x, CTA_TAB_MEMKIND, 0, row);
    }
}

/* The views for common questions (SQLITE.md). */
static const char views[] =
    "CREATE VIEW CUTRACE_TOP_KERNELS AS SELECT s.value AS name, COUNT(*) AS instances, "
    "SUM(k.end - k.start) AS total_ns, AVG(k.end - k.start) AS avg_ns, MIN(k.end - k.start) AS min_ns, "
    "MAX(k.end - k.start) AS max_ns, SUM(k.endIsUpperBound) AS end_bounded "
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.demangledName "
    "GROUP BY k.demangledName ORDER BY total_ns DESC;\n"
    "CREATE VIEW CUTRACE_COPIES_BY_KIND AS SELECT e.label AS kind, COUNT(*) AS copies, "
    "SUM(c.bytes) AS bytes, SUM(c.end - c.start) AS total_ns, "
    "SUM(c.bytes) * 1.0 / NULLIF(SUM(c.end - c.start), 0) AS gbps "
    "FROM CUPTI_ACTIVITY_KIND_MEMCPY c LEFT JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = c.copyKind "
    "GROUP BY c.copyKind ORDER BY bytes DESC;\n"
    "CREATE VIEW CUTRACE_API_SUMMARY AS SELECT s.value AS name, r.layer AS layer, COUNT(*) AS calls, "
    "SUM(r.end - r.start) AS total_ns, AVG(r.end - r.start) AS avg_ns, "
    "SUM(r.returnValue != 0) AS failures "
    "FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId "
    "GROUP BY r.nameId ORDER BY total_ns DESC;\n"
    /* the GPU's idle gaps per process and device: before each operation starting after every
     * earlier one (kernels, copies, sets) ended */
    "CREATE VIEW CUTRACE_GPU_GAPS AS SELECT globalPid, deviceId, prev_end AS start, start AS end, "
    "start - prev_end AS gap_ns FROM (SELECT globalPid, deviceId, start, MAX(end) OVER "
    "(PARTITION BY globalPid, deviceId ORDER BY start, end ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
    "PRECEDING) AS prev_end FROM (SELECT globalPid, deviceId, start, end FROM "
    "CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT globalPid, deviceId, start, end FROM "
    "CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT globalPid, deviceId, start, end FROM "
    "CUPTI_ACTIVITY_KIND_MEMSET)) WHERE start > prev_end ORDER BY gap_ns DESC;\n";

int cta_export_write(cta_tables *t, ct_reader *rd, const cta_diag_opts *dopt, int jobs, uint64_t *rows)
{
    ex x = {.t = t, .rd = rd, .base = cta_load_start(rd)};
    cta_map_init(&x.stacks);
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    cta_file_observers fo = {.ctx = &x, .begin = export_begin, .done = export_done,
                             .end = export_end, .abort = export_abort};
    cta_model m;
    enum_tables(&x);
    int rc = cta_load_run_jobs("export", rd, &fo, 0, jobs, &m);
    int have_model = rc == CTA_EXIT_OK;
    if (rc == CTA_EXIT_FAIL && x.failed)
        rc = CTA_EXIT_OK; /* the tables failed: said below, as any write failure */
    else if (have_model && !x.failed) {
        cta_diag *dg;
        int ndiag = cta_diagnose(&m, dopt, &dg);
        summary_tables(&x, &m, dg, ndiag);
        free(dg);
        if (!x.failed && cta_tables_exec(x.t, views) != 0)
            x.failed = 1;
    }
    *rows = cta_tables_rows(x.t);
    if (cta_tables_close(x.t, rc == CTA_EXIT_OK && !x.failed) != 0 && rc == CTA_EXIT_OK)
        rc = CTA_EXIT_FAIL;
    if (have_model)
        cta_model_free(&m);
    cta_map_free(&x.stacks);
    free(x.site_ids);
    pthread_mutex_destroy(&x.mu);
    pthread_cond_destroy(&x.cv);
    return rc;
}
