/* The writer's side of NVTX (ctp_nvtxw.c): joins the raw records ctp_nvtx.c stores in the rings
 * into NVTX_RANGE and NVTX_MARK records (FORMAT.md 4.8).
 *
 * Contract: called only by the thread holding the flush (ctp_writer.c). A push is kept in its
 * thread's open list until the pop at the same domain and level; a start in a process-wide
 * table (fixed size, allocated by ctp_nvtxw_init) until the end with its id, from any thread.
 * Messages are interned here, at most CTP_NVTXW_NAMES distinct messages and as many normalized
 * ones per file (digit runs as one '#'); past that a record's name is 0 and counted
 * (ctp_nvtxw_names_lost). With nolock (a signal handler's flush) nothing is interned (names 0)
 * and nothing allocated. */
#ifndef CTP_NVTXW_H
#define CTP_NVTXW_H

#include <stdint.h>

#include "ctp_maps.h"
#include "ctp_state.h"

enum { CTP_NVTXW_NAMES = 1024 };
/* ctp_nvtxw_encode's answer for an end whose start is not known yet: the record stays in the
 * ring (its start may still be in another thread's ring, not yet drained). */
enum { CTP_NVTXW_WAIT = 1 };

/* 0 or -1 (no memory). */
int ctp_nvtxw_init(void);
/* The raw record w (CTP_RAW_NVTX) of thread t into e. give_up: an end whose start is unknown is
 * recorded as unmatched instead of waiting. def: called (through ctp_intern_pending) for the
 * strings interned, before any record using them is encoded. 0, CT_E_FULL (e unchanged: retry
 * in the next chunk) or CTP_NVTXW_WAIT. */
int ctp_nvtxw_encode(ctp_thread *t, ct_enc *e, const uint64_t *w, int give_up, int nolock,
                     ctp_intern_fn def);
/* Records written so far in this file whose message was past the bound (LOSS reason 5). */
uint64_t ctp_nvtxw_names_lost(void);
/* A retired thread's open pushes (never popped: no record). */
void ctp_nvtxw_thread_dead(ctp_thread *t);
/* A new file (a forked child's, or after a failed exec): the bounds count again, opens forgotten. */
void ctp_nvtxw_new_file(void);

#endif
