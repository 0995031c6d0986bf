/* victim_bare.c: fn(arg, k) called from a frame without unwind tables. */
#ifndef VICTIM_BARE_H
#define VICTIM_BARE_H

void victim_bare_call(void (*fn)(void *, int), void *arg, int k);

#endif
