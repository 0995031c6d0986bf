/* The Kineto conversion's external merge sort (cta_kineto_conv.h): items of a fixed size, put
 * in order by (key, sub, seq) whatever their number.
 *
 * Contract: at most CTA_KSORT_BYTES of items in memory per sort; beyond that, sorted runs are
 * spilled to one temporary file in the sort's directory (unlinked as soon as created) and
 * merged through a heap that holds 64 items of each run. Memory is never the file's size. */
#ifndef CTA_KSORT_H
#define CTA_KSORT_H

#include <stddef.h>
#include <stdint.h>

#define CTA_KSORT_BYTES (8u << 20)

/* One item: an event of the Kineto file, or a record to write (its kind, cta_kconv_int.h). */
typedef struct {
    uint64_t key, sub, seq; /* the order: by key, then sub, then emission order */
    uint64_t start, end, corr, stream, bytes;
    uint32_t tid, name, domain, group;
    uint32_t grid[3], block[3], shared;
    uint16_t kind;
    uint8_t dev, gkind, dir, src, dst, synckind;
    uint8_t async, driver; /* a copy's call is asynchronous; a call is of the driver API */
} cta_kit;

/* The sort: fill it (cta_ksort_add), end the filling (cta_ksort_finish), read it in order
 * (cta_ksort_next). */
typedef struct {
    cta_kit *mem;
    size_t n, cap;
    int fd; /* the spilled runs, one after another (unlinked) */
    uint64_t spilled;
    struct cta_krun *runs;
    size_t nruns, runs_cap;
    uint32_t *heap; /* run indices, by their head item */
    size_t nheap;
    size_t mi;      /* iteration over mem when nothing was spilled */
    const char *tmpdir;
    int failed;
} cta_ksort;

/* An empty sort whose runs, when it spills, go to a temporary file in tmpdir. */
void cta_ksort_init(cta_ksort *s, const char *tmpdir);
/* Adds a copy of it; on a spill's I/O error, s->failed holds the errno and later adds are
 * dropped. */
void cta_ksort_add(cta_ksort *s, const cta_kit *it);
/* Ends the adding: sorts what is in memory (spilled as a last run when others were). 0, or -1
 * on an I/O error. */
int cta_ksort_finish(cta_ksort *s);
/* The next item in order: 1, 0 at the end, -1 on an I/O error. */
int cta_ksort_next(cta_ksort *s, cta_kit *out);
void cta_ksort_free(cta_ksort *s);

/* A new temporary file "DIR/cutrace-kineto-XXXXXX", its name in path: its descriptor, or -1
 * (errno set). */
int cta_ksort_tmpfile(const char *dir, char *path, size_t len);

#endif
