/* How a workload's host work per iteration varies (issue 28: verdicts that hold whatever the
 * shape of the gaps), shared by train_loop (--shape: its loader) and tracegen (--shape: its
 * loader's and host's work): the same total in every shape.
 *   regular    every iteration the average;
 *   bursty     a batch in WL_SHAPE_BURST arrives with the work of all WL_SHAPE_BURST, the others
 *              at once (workers delivering in bursts);
 *   irregular  from 0.05 to 2.75 times the average, in a cycle of 5 averaging 1 (imagenet's
 *              gaps ran from 23 ms to 1.1 s).
 * C and C++: header only. */
#ifndef WL_SHAPE_H
#define WL_SHAPE_H

#include <string.h>

enum { WL_SHAPE_REGULAR, WL_SHAPE_BURSTY, WL_SHAPE_IRREGULAR };
#define WL_SHAPE_BURST 4

/* Iteration it's share of the work, as a factor of the average (over iters iterations their
 * sum is iters). */
static inline double wl_shape_factor(int shape, int it, int iters)
{
    static const double irregular[5] = {0.05, 2.75, 0.4, 1.2, 0.6};
    switch (shape) {
    case WL_SHAPE_BURSTY:
        return it % WL_SHAPE_BURST ? 0
                                   : (double)(iters - it < WL_SHAPE_BURST ? iters - it : WL_SHAPE_BURST);
    case WL_SHAPE_IRREGULAR:
        return iters - it < 5 - it % 5 ? 1 : irregular[it % 5];
    default:
        return 1;
    }
}

/* The shape named name; -1 if none is. */
static inline int wl_shape_parse(const char *name)
{
    return !strcmp(name, "regular")     ? WL_SHAPE_REGULAR
           : !strcmp(name, "bursty")    ? WL_SHAPE_BURSTY
           : !strcmp(name, "irregular") ? WL_SHAPE_IRREGULAR
                                        : -1;
}

#endif
