/* Helpers shared by the simulated driver's tests (tests/sim-driver). The tests link
 * build/tests/fakecuda/libcuda.so.1 directly and call the driver API as programs do; each runs
 * in its own process, so a test sets FAKECUDA_* variables with sd_env before sd_init. */
#ifndef SD_H
#define SD_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "ctt.h"

#include <pthread.h>

/* Asserts a CUresult. */
#define CK(call) ASSERT_INT((call), ==, CUDA_SUCCESS)

/* Sets NAME=value in this test's process (before sd_init). */
void sd_env(const char *name, const char *value);
/* cuInit, then retains device 0's primary context and makes it current; 0 on success. */
int sd_init(void);
/* CLOCK_MONOTONIC in nanoseconds. */
long long sd_now_ns(void);
/* The elapsed time between two completed events, in nanoseconds. */
double sd_elapsed_ns(CUevent a, CUevent b);
/* n bytes of device memory, a non-blocking stream and two events to time work on it (after
 * sd_init); 0 on success. */
int sd_buffer_stream_events(size_t n, CUdeviceptr *d, CUstream *s, CUevent *a, CUevent *b);
/* A kernel from a text image, named NAME with `nparams` 8-byte parameters. */
CUfunction sd_kernel(const char *name, int nparams);

/* A gate holds a stream: work queued behind it waits until sd_gate_open, however late the
 * host gets there, so durations measured by events around that work are exact even on a
 * loaded machine. */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    int open;
} sd_gate;
int sd_gate_close(sd_gate *g, CUstream s);
void sd_gate_open(sd_gate *g);

/* Host link and memory rates the driver's README documents, in bytes/s. */
#define SD_T4_LINK (0.985e9 * 16 * 0.8)
#define SD_H100_LINK (3.938e9 * 16 * 0.8)

#endif
