#define _GNU_SOURCE
#include "fmt.h"

#include <fcntl.h>
#include <unistd.h>

/* An fd_check that plays a program closing the writer's descriptor just after the check: at
 * the chunk `close_at` it closes the descriptor it returns; at the next call it sees it closed
 * and opens the file again, as the tracer's check does. */
typedef struct {
    const char *path;
    int calls, close_at, chunk, reopened;
} fmt_closer;

static int fmt_close_after_check(void *arg, int fd)
{
    fmt_closer *c = arg;
    c->calls++;
    if (fcntl(fd, F_GETFD) < 0) {
        c->reopened++;
        return open(c->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
    if (c->chunk++ == c->close_at)
        close(fd);
    return fd;
}

/* A descriptor closed between ct_writer_chunk's check and its write (EBADF) is checked again
 * and the chunk goes to the file through the descriptor that replaces it: no chunk fails, the
 * file reads whole. */
TEST_IMPL(writer_descriptor_closed_after_its_check)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/closed.ct", ctt_tmpdir());
    static char scratch[1 << 16];
    ct_header h;
    ASSERT_INT(ct_header_collect(&h, "test", "FMT=1", scratch, sizeof scratch), ==, 0);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    ASSERT(fd >= 0);
    fmt_closer c = {.path = path, .close_at = 1};
    ct_writer_opts o = {.fd_check = fmt_close_after_check, .fd_check_arg = &c};
    ct_writer *w;
    ASSERT_INT(ct_writer_open_fd(&w, fd, &h, &o), ==, 0);
    static uint8_t buf[1 << 16];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    ASSERT_INT(ct_enc_string(&e, 5, 1, "cudaLaunchKernel", 16), ==, 0);
    for (int k = 0; k < 30; k++) {
        ct_rec_api a = {.start = 1000u * k + 10, .function = 1, .corr = (uint64_t)k + 1};
        ASSERT_INT(ct_enc_api(&e, 1000u * k + 510, &a), ==, 0);
        if (k == 29) {
            ct_rec_end end = {CT_END_EXIT, 0, 32, 0};
            ASSERT_INT(ct_enc_end(&e, 30000, &end), ==, 0);
        }
        if (k % 10 == 9) {
            ct_chunk_info ci = {.tid = 100, .low_water = 1000u * (uint64_t)k,
                                .flags = k == 29 ? CT_CHUNK_FINAL : 0};
            ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
        }
    }
    ASSERT_INT(ct_writer_close(w), ==, 0);
    ASSERT_INT(c.reopened, ==, 1);
    ASSERT_INT(c.calls, ==, 4); /* one a chunk, and the second's again */
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_STR(l.warn, "");
    ASSERT_UINT(fmt_count(&l, CT_REC_API), ==, 30);
    fmt_free(&l);
    return 0;
}
