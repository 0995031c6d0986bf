/* Helpers of the robustness suite (tests/robust): writing hostile traces through the format
 * library, running every cutrace command that parses a trace on a file under ASan/UBSan (the
 * sanitizer build) and without (to measure memory), and checking what they print. */
#ifndef RB_H
#define RB_H

#include "ctt.h"
#include "cttrace.h"

/* A trace being written: one stream, chunks written by rb_chunk. */
typedef struct {
    ct_writer *w;
    ct_enc e;
    uint8_t *buf;
    uint32_t tid;
} rb_trace;

/* Creates path with a header of this process and a 4 MiB encoder; aborts on failure. */
void rb_open(rb_trace *t, const char *path);
/* Writes the encoder's records as a chunk (zstd) with this low-water mark. */
int rb_chunk(rb_trace *t, uint64_t low_water);
/* Writes the last chunk with an END record at ts and closes the file. */
int rb_close(rb_trace *t, uint64_t ts);
/* Appends a record; when the encoder is full, writes a chunk first (low-water 0). */
#define RB_ENC(t, call) \
    do { \
        if ((call) == CT_E_FULL) { \
            ASSERT_INT(rb_chunk(t, 0), ==, 0); \
            ASSERT_INT((call), ==, 0); \
        } \
    } while (0)

/* Runs `cutrace ARGS...` (asan: the sanitizer build). Fails the test (returns 1) unless it
 * exits with `want` (-1: 0 or 3) and prints no sanitizer report. *maxrss_kb, if not NULL, gets
 * its peak resident size (its own getrusage: the command alone, spawned without a copy of the
 * test's memory). */
int rb_cutrace(ctt_proc *p, int asan, char *const args[], int want, long *maxrss_kb);
/* Runs every command of fz_commands (dump, summary, summary --overview, timeline, export) on path
 * with both builds; each must exit with want_rc and, in the plain build, stay under max_rss_mb
 * of memory. If warn is not NULL, every run's stderr must contain it. 0 or 1 (failed, reason
 * printed). */
int rb_all_commands(const char *path, int want_rc, long max_rss_mb, const char *warn);

/* Bytes of a file into a malloc'd buffer (NULL-terminated too); aborts if unreadable. */
uint8_t *rb_slurp(const char *path, size_t *len);
int rb_spit(const char *path, const void *buf, size_t len);

/* Reads path in time order in-process: the number of records of `type` (0: all), the file's
 * stats into *st and its warnings ("msg\n" each) into warn; -1 if it cannot be opened (the
 * error in warn). */
long rb_read(const char *path, uint32_t type, ct_stats *st, char *warn, size_t warnlen);

#endif

