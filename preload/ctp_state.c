/* The shared state's definitions (contract in ctp_state.h). */
#include "ctp_state.h"

__thread ctp_thread *ctp_tls __attribute__((tls_model("initial-exec")));
ctp_thread ctp_untraced;
_Atomic uint64_t ctp_untraced_calls;
_Atomic(ctp_thread *) ctp_threads;
ctp_options ctp_opt = {.stacks = 1, .python_frames = 1, .gpu_every = 0, .cpu_gap_ns = 100000,
                       .cpu_gap_ticks = 100000, .host_ns = 100000000,
                       .thread_sample_ns = 5000000};
pthread_mutex_t ctp_reg_mu = PTHREAD_MUTEX_INITIALIZER;
uint64_t ctp_buffer_used;
const char *_Atomic ctp_nvtx_domain_names[CTP_NVTX_DOMAINS];
