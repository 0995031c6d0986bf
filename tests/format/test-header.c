#include "fmt.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The header records who wrote the trace: host, pid, command line, job identity from the
 * environment, and a clock pair taken together. */
TEST_IMPL(header_identity_and_clocks)
{
    setenv("SLURM_JOB_ID", "4242", 1);
    setenv("RANK", "3", 1);
    unsetenv("LOCAL_RANK");
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t real = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    fmt_api_trace(path, 1, 3, NULL);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    const ct_header *h = ct_reader_header(l.r, 0);
    char host[256];
    gethostname(host, sizeof host);
    ASSERT_STR(h->hostname, host);
    ASSERT_UINT(h->pid, ==, (uint32_t)getpid());
    ASSERT_UINT(h->ppid, ==, (uint32_t)getppid());
    ASSERT_CONTAINS(h->cmdline, "test-format");
    ASSERT_CONTAINS(h->exe, "test-format");
    ASSERT_INT(strlen(h->boot_id), ==, 36);
    ASSERT_NEAR((double)h->realtime_ns, (double)real, 5e9);
    ASSERT_UINT(h->clock_uncertainty_ns, <, 10000000);
    int slurm = 0, rank = 0;
    for (size_t i = 0; i < h->nenv; i++) {
        slurm += strcmp(h->env[i], "SLURM_JOB_ID=4242") == 0;
        rank += strcmp(h->env[i], "RANK=3") == 0;
        ASSERT(strncmp(h->env[i], "LOCAL_RANK=", 11) != 0);
    }
    ASSERT_INT(slurm, ==, 1);
    ASSERT_INT(rank, ==, 1);
    fmt_free(&l);

    /* Scratch too small for the fixed parts is refused, not overrun. */
    char small[64];
    ct_header hh;
    ASSERT_INT(ct_header_collect(&hh, "v", "", small, sizeof small), ==, CT_E_INVAL);
    return 0;
}

/* frameworks (format 1.1): written only when set, read back; a header without it (as every
 * file before 1.1) reads as 0. The reader of 1.1 still reads a 1.0 file. */
TEST_IMPL(header_frameworks_field)
{
    char scratch[16384 + 8192];
    for (uint64_t fw = 0; fw <= CT_FW_TORCH; fw++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/fw%llu.ct", ctt_tmpdir(), (unsigned long long)fw);
        ct_header h;
        ASSERT_INT(ct_header_collect(&h, "v", "", scratch, sizeof scratch), ==, 0);
        h.frameworks = fw;
        ct_writer *w;
        ASSERT_INT(ct_writer_open(&w, path, &h, NULL), ==, 0);
        ASSERT_INT(ct_writer_close(w), ==, 0);
        if (!fw) /* as a 1.0 writer wrote it: the same fields, version 1.0 */
            ASSERT_INT(fmt_set_version(path, CT_FORMAT_MAJOR, 0), ==, 0);
        fmt_log l;
        ASSERT_INT(fmt_read1(&l, path), ==, 0);
        const ct_header *r = ct_reader_header(l.r, 0);
        ASSERT_UINT(r->frameworks, ==, fw);
        ASSERT_UINT(r->minor, ==, fw ? CT_FORMAT_MINOR : 0);
        fmt_free(&l);
    }
    return 0;
}
