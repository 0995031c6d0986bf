/* What tracegen.c (the training-loop simulation and the command line) and tracegen_random.c
 * (--random) share. */
#ifndef TRACEGEN_H
#define TRACEGEN_H

#include <stdint.h>

/* Reports a format library error rc while doing `what` and exits with status 1. */
_Noreturn void tg_die(const char *what, int rc);
/* Writes process proc (0-based) of nproc of random shape for seed into dir/random-P.cutrace;
 * gpu_timing as tracegen's --gpu-timing. */
void tg_run_random(const char *dir, uint64_t seed, int proc, int nproc, int gpu_timing);

#endif
