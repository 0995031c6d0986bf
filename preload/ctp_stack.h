/* Call stacks (CUTRACE_STACKS = none | default | all), captured with libunwind, interned, and
 * symbolized inside the trace so another machine can read them.
 *
 * ctp_stack_capture walks the calling thread's stack (unw_backtrace, no allocation once warm),
 * drops cutrace's own frames, and returns the stack's id. A stack seen before costs one hash
 * lookup (lock-free). A new stack is interned under a mutex: each new return address becomes a
 * FRAME (function name from dladdr, demangled when the process has a C++ runtime; module path;
 * offset from the module's load address) and the stack a STACK of frame ids. The writer writes
 * the definitions not yet written (ctp_stack_pending) after the strings they use and before any
 * record that refers to them. The tables hold at most 49152 stacks and 49152 frames (what their
 * lock-free lookup maps cache); a process with more distinct call sites gets stack id 0 for the
 * new ones, at the cost of the hash lookup only. */
#ifndef CTP_STACK_H
#define CTP_STACK_H

#include <stdint.h>

#include "cttrace.h"
#include "ctp_maps.h"

/* Frames kept per stack, innermost first: PyTorch puts 60 to 90 C++ frames (libtorch, cuBLAS,
 * its caching allocator) between a CUDA call and the Python line that made it. */
#define CTP_STACK_DEPTH 128

/* The calling thread's stack id (0 if it cannot be had). */
uint32_t ctp_stack_capture(void);
/* The id of the stack at[0..n) (innermost first; a Python frame's entry its identity key, with
 * code_at[i] its frame key, as ctp_python_splice gives them), interned as ctp_stack_capture
 * does: a stack seen before costs one lock-free lookup; a new one takes the table's lock. 0 if
 * n is 0 or the table is full. For the thread sampler, whose stacks are Python frames read from
 * another thread, of this process (pid 0) or of a loader worker (pid: its new frames are read
 * from it). */
uint32_t ctp_stack_intern(uint32_t pid, const uint64_t *at, const uint64_t *code_at, int n);
/* Appends the FRAME and STACK definitions made since the previous call to e at ts, after the
 * strings interned meanwhile (through strings, ctp_intern_pending's): 0, or CT_E_FULL when e is
 * full (call again after writing it out). try: give up (return -1) rather than wait for the
 * table's lock (signal handlers). */
int ctp_stack_pending(ct_enc *e, uint64_t ts, int try, ctp_intern_fn strings, void *ctx);
/* Makes every definition pending again (a forked child starts a new file). */
void ctp_stack_rewind(void);
/* Fork protection of the table's lock. */
void ctp_stack_lock(void);
void ctp_stack_unlock(void);

#endif
