#define _GNU_SOURCE
#include "fmt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child under RLIMIT_FSIZE (SIGXFSZ ignored, as the tracer's writer has it blocked): 3 KiB
 * chunks until one is refused; the refusal must leave the writer's reserve under the limit (the
 * chunk is refused with EFBIG before any byte of it is written), and a last small chunk must
 * then fit. Exit status: 0, or the step that failed. */
static int fmt_reserve_child(const char *path, rlim_t limit, size_t reserve)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 10;
    static char scratch[1 << 16];
    ct_header h;
    if (ct_header_collect(&h, "test", "FMT=1", scratch, sizeof scratch) != 0)
        return 11;
    ct_writer *w;
    ct_writer_opts o = {.reserve = reserve};
    if (ct_writer_open(&w, path, &h, &o) != 0)
        return 12;
    static uint8_t buf[8192];
    static char name[3000];
    memset(name, 'k', sizeof name);
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    uint64_t before = 0;
    int rc = 0;
    for (uint32_t k = 1; k < 1000 && rc == 0; k++) {
        before = ct_writer_bytes(w);
        if (ct_enc_string(&e, k, k, name, sizeof name) != 0)
            return 13;
        ct_chunk_info ci = {.tid = 1};
        rc = ct_writer_chunk(w, &e, &ci, 0); /* stored raw: 3 KiB each */
    }
    if (rc != CT_E_IO || errno != EFBIG)
        return 14;
    struct stat st;
    if (stat(path, &st) != 0 || (uint64_t)st.st_size != before || ct_writer_bytes(w) != before)
        return 15; /* the refused chunk wrote nothing */
    if (before + reserve > limit)
        return 16; /* the reserve was not kept */
    ct_rec_end end = {CT_END_STOPPED, CT_WRITE_FILE_LIMIT, 2, 0};
    ct_enc_end(&e, 5000, &end);
    ct_chunk_info ci = {.tid = 1, .flags = CT_CHUNK_FINAL};
    if (ct_writer_chunk(w, &e, &ci, 0) != 0)
        return 17; /* the last chunk goes into the reserve */
    return ct_writer_close(w) == 0 ? 0 : 18;
}

/* ct_writer_opts.reserve: a writer that keeps room for a last chunk refuses, under the file size
 * limit, the chunk that would take it, and writes the one after into it; the file then reads
 * as a whole trace ending with END "stopped". */
TEST_IMPL(writer_reserve_keeps_room_for_the_end)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/reserve.ct", ctt_tmpdir());
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0)
        _exit(fmt_reserve_child(path, 40000, 4096));
    int status;
    ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
    ASSERT(WIFEXITED(status));
    ASSERT_INT(WEXITSTATUS(status), ==, 0);
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(ct_reader_stats(l.r, 0)->complete, ==, 1);
    ASSERT_UINT(fmt_count(&l, CT_REC_END), ==, 1);
    ASSERT_UINT(l.recs[l.n - 1].u.end.how, ==, CT_END_STOPPED);
    ASSERT_INT(l.recs[l.n - 1].u.end.code, ==, CT_WRITE_FILE_LIMIT);
    ASSERT_UINT(fmt_count(&l, CT_REC_STRING), >=, 8);
    fmt_free(&l);
    return 0;
}
