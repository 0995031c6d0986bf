/* Internal to the model (cta_model.c: processes, finishing, freeing; cta_join.c: the per-record
 * pass): the state of a call being joined and of a live allocation, which both keep in each
 * process's pools (cta_proc.calls, cta_proc.allocs), and the join's end. The sweep's own internal
 * interface is cta_sweep.h. */
#ifndef CTA_MODEL_INT_H
#define CTA_MODEL_INT_H

#include "cta_sweep.h"

/* A call being joined: API record + its detail (+ its GPU record for launches and copies). */
typedef struct {
    uint64_t corr;
    uint8_t have_api, have_detail, type; /* type: CT_REC_LAUNCH / COPY / MEM */
    uint8_t churn, have_gpu;             /* have_gpu: the GPU record came first and waits */
    ct_rec_gpu gpu;
    uint64_t gpu_end;
    uint64_t api_start, api_end;
    uint32_t api_idx, tid;
    uint32_t stack;                      /* call site (stack index), from the API or MEM record */
    uint32_t kidx, vidx;                 /* launches: kernel and variant index */
    union {
        ct_rec_launch launch;
        ct_rec_copy copy;
    } u;
} callent;

/* Live allocation */
typedef struct {
    uint64_t size;
    uint32_t stack;
    uint8_t dev, churn, kind;
} liveent;

/* At the end of the records: the sites of synchronizations whose API record never came, and the
 * calls still waiting for a part (GPU intervals whose detail never came count as GPU time only;
 * details whose GPU interval never came as untimed). */
void cta_join_finish(cta_model *m, cta_proc *p);

#endif
