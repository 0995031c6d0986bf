/* Allocations and frees (cta_model_int.h, "cta_memory.c"): the live blocks, churn (a size freed
 * and allocated again), and the sweep's memory points; an allocation call's MEM record is its
 * detail. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

static int mem_slot(const ct_rec_mem *mr)
{
    switch (mr->kind) {
    case CT_ALLOC_PINNED:
    case CT_ALLOC_HOST_REGISTER:
        return CTA_HOST_DEV;
    case CT_ALLOC_DEVICE:
    case CT_ALLOC_POOL:
    case CT_ALLOC_VMM_PHYSICAL:
    case CT_ALLOC_MANAGED:
        return cta_dev_slot(mr->device);
    default:
        return -1; /* mappings and reservations do not add memory in use */
    }
}

void cta_on_mem(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_mem *mr = &r->u.mem;
    int d = mem_slot(mr);
    if (d < 0)
        return;
    uint32_t stack = cta_stack_index(p, mr->stack);
    int churn = 0;
    if (mr->op == CT_MEM_ALLOC) {
        if (mr->result != 0) {
            cta_feat_where_now(m, p, cta_thread_of(p, r->tid), CTA_WHERE_OOM, 1);
            cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FAIL, .dev = (uint8_t)d, .a = stack,
                                  .b = mr->size, .kind = (uint8_t)mr->kind,
                                  .flag = (uint8_t)(mr->result < 255 ? mr->result : 255)});
            return;
        }
        uint64_t key[2] = {(uint64_t)d, mr->size};
        if (d != CTA_HOST_DEV && cta_map_find(&p->freed_sizes, key, sizeof key) != UINT32_MAX &&
            mr->kind == CT_ALLOC_DEVICE) {
            churn = 1;
            p->churn_allocs++;
        }
        uint32_t li = cta_pool_alloc(&p->allocs);
        cta_liveent *le = cta_pool_at(&p->allocs, li);
        le->size = mr->size;
        le->stack = stack;
        le->dev = (uint8_t)d;
        le->churn = (uint8_t)churn;
        le->kind = (uint8_t)mr->kind;
        uint32_t old;
        if (ct_hash_del(&p->live, mr->address ? mr->address : mr->handle, &old))
            cta_pool_put(&p->allocs, old); /* its free was lost: the new block replaces it */
        cta_xhash_put(&p->live, mr->address ? mr->address : mr->handle, li, "the live allocations");
        cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_ALLOC, .dev = (uint8_t)d, .a = stack, .b = mr->size});
    } else {
        uint32_t li;
        if (!ct_hash_del(&p->live, mr->address ? mr->address : mr->handle, &li)) {
            p->unknown_frees++;
            return;
        }
        cta_liveent *le = cta_pool_at(&p->allocs, li);
        uint64_t key[2] = {(uint64_t)le->dev, le->size};
        cta_map_get(&p->freed_sizes, key, sizeof key, NULL);
        churn = le->churn;
        if (churn)
            p->churn_frees++;
        cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FREE, .dev = le->dev, .a = le->stack, .b = le->size});
        cta_pool_put(&p->allocs, li);
    }
    if (!mr->corr) /* no call to join (FORMAT.md: 0 means none): an entry would never go */
        return;
    cta_joining *c = cta_call_detail(p, mr->corr, CT_REC_MEM, r->tid);
    c->churn = (uint8_t)churn;
    c->mem_dev = (uint8_t)(churn ? d : 0);
    if (stack)
        c->stack = stack;
    if (c->have_api)
        cta_call_host_done(m, p, c);
}
