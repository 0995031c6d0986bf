/* slowfs keeps the promises the loader tests build on: the file reads back as sf_byte says, no
 * faster than the rate it was given (the bound is the token bucket's, exact: the last byte is
 * answered no earlier than size / rate after the first request), and a process reading it waits
 * in uninterruptible sleep ('D'), the state a process on slow storage is in, not 'S' as in a
 * sleep. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctt.h"
#include "sf.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads the whole file in 64 KiB reads: the bytes that differ from sf_byte, or -1 if unreadable. */
static long read_all(const char *path, uint64_t *total)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    static uint8_t buf[64 << 10];
    long bad = 0;
    ssize_t n;
    *total = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            bad += buf[i] != sf_byte(*total + (uint64_t)i);
        *total += (uint64_t)n;
    }
    close(fd);
    return n < 0 ? -1 : bad;
}

TEST_IMPL(slowfs_serves_its_file_no_faster_than_its_rate)
{
    const uint64_t size = 3u << 20, rate = 2u << 20;
    sf_mount m;
    ASSERT_INT(sf_start(&m, size, rate), ==, 0);
    double t0 = now_s();
    uint64_t total;
    long bad = read_all(m.file, &total);
    double took = now_s() - t0;
    ASSERT_INT(sf_stop(&m), ==, 0);
    ASSERT_INT(bad, ==, 0);
    ASSERT_UINT(total, ==, size);
    printf("read %llu bytes at %.0f bytes/s in %.3f s (size / rate = %.3f s)\n",
           (unsigned long long)total, (double)rate, took, (double)size / (double)rate);
    ASSERT(took >= (double)size / (double)rate);
    return 0;
}

TEST_IMPL(slowfs_reader_waits_in_uninterruptible_sleep)
{
    const uint64_t size = 2u << 20, rate = 1u << 20;
    sf_mount m;
    ASSERT_INT(sf_start(&m, size, rate), ==, 0);
    pid_t reader = fork();
    if (reader == 0) {
        uint64_t total;
        _exit(read_all(m.file, &total) == 0 && total == size ? 0 : 1);
    }
    /* its state every 20 ms while it reads (about 2 s): waiting on pages the kernel reads ahead
     * through the server, it is in 'D' nearly all the time; a test whose reader slept instead
     * would see 'S' */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)reader);
    int samples = 0, in_d = 0;
    for (;;) {
        char *st = ctt_read_file(path, NULL);
        char *close_paren = st ? strrchr(st, ')') : NULL;
        if (!close_paren || close_paren[2] == 'Z') {
            free(st);
            break;
        }
        samples++;
        in_d += close_paren[2] == 'D';
        free(st);
        usleep(20000);
    }
    int status;
    ASSERT_INT(waitpid(reader, &status, 0), ==, reader);
    ASSERT_INT(sf_stop(&m), ==, 0);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("reader in D in %d of %d samples\n", in_d, samples);
    ASSERT_INT(samples, >=, 20);
    ASSERT_INT(in_d * 10, >=, samples * 8);
    return 0;
}
