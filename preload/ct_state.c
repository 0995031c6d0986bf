/* The shared state's definitions (contract in ct_state.h). */
#include "ct_state.h"

__thread ct_thread *ct_tls __attribute__((tls_model("initial-exec")));
ct_thread ct_untraced;
_Atomic(ct_thread *) ct_threads;
ct_options ct_opt = {1, 0, 100000, 100000};
pthread_mutex_t ct_reg_mu = PTHREAD_MUTEX_INITIALIZER;
uint64_t ct_buffer_used;
