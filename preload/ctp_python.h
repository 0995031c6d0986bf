/* The calling thread's Python frames, read from CPython's memory (issue 14), and another
 * thread's, read by the thread sampler (issue 28: ctp_python_sample, below).
 *
 * When the process runs CPython (its symbols found at run time with dlsym: no build dependency on
 * Python), ctp_python_splice puts the Python frames of the calling thread's Python thread state
 * into its native stack, innermost first, whether the thread holds the GIL or released it around
 * the call (ctypes): the thread state is found with PyGILState_GetThisThreadState, which reads a
 * thread-specific key and neither needs the GIL nor allocates; no other Python function is
 * called on the way but Py_IsFinalizing (an atomic read).
 *
 * The walk reads the interpreter's memory directly (no system call): while the thread is inside
 * the traced call, nothing but the thread itself changes or frees its thread state, its frames
 * and the code objects they hold, except interpreter finalization, which deletes other threads'
 * states (3.11-3.13 free the state and leak the frames, which stay mapped; up to 3.10 frames are
 * objects, freed with it). So once finalization has begun the walk reads with process_vm_readv
 * on the process itself, where an unmapped address is an error, not a fault, and a walk during
 * which it began is read again that way. What is left: a thread suspended between its check and
 * its reads for the whole time finalization takes to free what it reads and the allocator to
 * return those pages to the system. The walk is bounded (CTP_PY_MAX frames).
 *
 * Layouts are per version, written from CPython's headers (Include/cpython/code.h, pystate.h,
 * Include/internal/pycore_frame.h, frameobject.h of each release); py-spy and austin read the
 * same structures. Known: 3.8 to 3.13 (before 3.11 a frame is named by its code's co_name: no
 * qualified name). Any other version is reported once on stderr and its frames are left native,
 * never guessed. */
#ifndef CTP_PYTHON_H
#define CTP_PYTHON_H

#include <stdint.h>

#include "ctp_state.h"

#define CTP_PY_MAX 64
#define CTP_PY_KEY (1ull << 63)

/* Splices Python frames into a native stack ips[0..n) (innermost first, at most cap entries):
 * each native frame of the interpreter's evaluation loop is replaced by the Python frames it
 * runs (from 3.11 one such native frame runs several). A Python frame's entry is its identity
 * key (bit 63 set: a mix of the code object's address, its file, name, line table and first
 * line, and the instruction), and code_at[i] its frame key, which ctp_python_frame reads; for a
 * native entry code_at[i] is 0. Returns the new count; ips unchanged (n returned, code_at
 * untouched) if the thread has no Python frames or Python is absent or unknown. */
int ctp_python_splice(uint64_t *ips, int n, int cap, uint64_t *code_at);
/* The definition of a frame key (from code_at, while the frame is still running) of process
 * pid (0: this one; else a loader worker, ctp_python_sample's): file, qualified name and line,
 * interned; -1 if the frame's code cannot be read. */
int ctp_python_frame(uint64_t key, uint32_t pid, uint32_t *file, uint32_t *function,
                     uint32_t *line);
/* The calling thread's Python thread state (its address; 0 if none, or no Python cutrace can
 * read, or not initialized or finalizing): what ctp_python_sample reads from another thread. */
uint64_t ctp_python_tstate(void);
/* A code object's bytes a sample reads: from its type to the end of its line table's pointer. */
#define CTP_PY_CODE_BYTES 144
/* What the previous sample of a thread read (ctp_python_sample), kept by the sampler per
 * thread: where its current frame was found (3.11, 3.12: the _PyCFrame), its data stack's chunk
 * (3.11+: [chunk, end) read, a little above its top), and its frames' code objects with their
 * bytes as read, which the next samples use again until they are CTP_PY_RECHECK samples old. */
typedef struct ctp_py_hint {
    uint64_t cframe, chunk, end;
    uint64_t bottom;             /* its outermost frame */
    uint32_t ncodes, age;        /* age: samples since every code object was read */
    uint64_t codes[CTP_PY_MAX];
    unsigned char bytes[CTP_PY_MAX][CTP_PY_CODE_BYTES];
} ctp_py_hint;
/* The Python frames of the thread whose state is tstate, read from another thread while it
 * runs (the thread sampler's, ctp_tsample.h), in this process (pid 0) or in process pid (a
 * loader worker forked without exec, whose thread runs on the forking thread's state, at the
 * same address), innermost first, as ctp_python_splice gives
 * them (keys[i] the identity key, code_at[i] the frame key), at most cap (<= CTP_PY_MAX).
 * Every read goes through process_vm_readv: frames that change or go away under the reader
 * make a read fail or come back inconsistent, never a fault. The state is read together with
 * what the previous sample of the thread (hint, updated) read: from 3.11 on, in the steady state
 * (the thread in code it ran at the previous sample) one system call reads the state and its
 * whole data stack; the code objects of its frames are those the previous samples read (a frame
 * holds its code object: one freed and another made at its address between two samples, at the
 * same place of the thread's stack, would be named after the old one until the next check), all
 * read again every CTP_PY_RECHECK samples; what moved costs one more read each (the current
 * frame, the stack, the code objects not had). Before 3.11 each frame is read on its own. A frame popped
 * between the reads, a code object that is not one, or a chain that does not end makes the
 * sample unreadable. Returns the count (0: no frames), or -1 if the frames could not be read
 * whole. One caller at a time (static buffers). */
int ctp_python_sample(uint32_t pid, uint64_t tstate, ctp_py_hint *hint, uint64_t *keys,
                      uint64_t *code_at, int cap);
/* One thread's frames as ctp_python_sample gives them: n (-1: not read whole), keys, code_at. */
typedef struct ctp_py_frames {
    int n;
    uint64_t keys[CTP_PY_MAX], code_at[CTP_PY_MAX];
} ctp_py_frames;
/* ctp_python_sample of n threads of this process (tstates[i], hints[i]) into out[i], their
 * states and data stacks read in one system call for all (a thread's code objects, when due to be read again,
 * and a thread whose read failed or raced, are read on their own as ctp_python_sample reads). */
void ctp_python_sample_many(int n, const uint64_t *tstates, ctp_py_hint *const *hints, ctp_py_frames *out);
/* In a forked child (ctp_session's fork handler): the pid to read, and a lookup the fork
 * interrupted starts again. */
void ctp_python_fork_child(void);
/* Once per trace file, when the process runs a CPython it can read: appends to th's ring the
 * PYTHON record (FORMAT.md 4.7: version, program, prefixes, module search path), which the
 * analyzer needs to tell the user's files from the interpreter's. Cheap when done already (one
 * atomic load); interns strings the first time. */
void ctp_python_describe(ctp_thread *th);
/* A new trace file (fork child, exec) describes the interpreter again. */
void ctp_python_reset(void);

#endif
