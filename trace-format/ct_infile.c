/* One file being read (see ct_read_internal.h): its warnings, and the order of the heap of its
 * chunks' cursors, by the time of their next record, which loading (ct_chunkload.c) pushes onto
 * and delivering (ct_read.c) takes from. */
#include "ct_read_internal.h"

#include <stdarg.h>
#include <stdio.h>

void ct__warn(ct__infile *f, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (f->r->opts.warn)
        f->r->opts.warn(f->r->opts.warn_ctx, f->path, msg);
    else
        fprintf(stderr, "cutrace: warning: %s: %s\n", f->path, msg);
}

void ct__infile_sift_down(ct__infile *f, size_t i)
{
    ct__cursor **h = f->heap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < f->nheap && ct__cursor_before(h[l], h[m]))
            m = l;
        if (l + 1 < f->nheap && ct__cursor_before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            break;
        ct__cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    f->runner = f->nheap < 2 ? NULL
              : f->nheap > 2 && ct__cursor_before(h[2], h[1]) ? h[2] : h[1];
}
