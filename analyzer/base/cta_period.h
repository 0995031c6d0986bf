/* cta_period: the period of a sequence of symbols (a device's kernels and copies, each named by
 * a number): the shortest period that repeats nearly as long as any, a tenth of each block of
 * the repetition allowed to differ, over three iterations and a quarter of the sequence at
 * least (a loop is what the sequence does most). Used by the start-up (cta_startup.c) to find
 * where a training loop's iterations begin to repeat. */
#ifndef CTA_PERIOD_H
#define CTA_PERIOD_H

#include <stddef.h>
#include <stdint.h>

/* The period of sy[0..n), 0 if none repeats as a loop; *len: the longest repetition's length
 * (symbols), *from its first symbol. A sequence longer than a window (cta_period.c) is looked at
 * in two windows, its middle and its end, each window's period followed through the whole
 * sequence, so a start-up of any length may precede the loop. */
size_t cta_period_find(const uint32_t *sy, size_t n, size_t *len, size_t *from);

#endif
