/* Damaged traces: copies of tracegen's traces (random shapes and the training loop) cut at
 * eight points and with bytes overwritten at fixed pseudo-random places, against the reference.
 * Both read what the format library recovers; a file nothing can be read from must be an error
 * for both (cutrace exits 3). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "an_helpers.h"
#include "refmodel.h"

static int write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, data, len);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

/* 0 when cutrace and the reference agree on the damaged file at path. */
static int check_damaged(const char *path, const char *what)
{
    char err[512];
    rm_result *r = rm_compute(path, err, sizeof err);
    if (r) {
        rm_free(r);
        return rm_check(path, "--variants", what, NULL) == 0 ? 0 : -1;
    }
    ctt_proc p;
    if (an_run(&p, "summary --json {}", path) != 0)
        return -1;
    int ok = p.exited && p.code == 3;
    if (!ok)
        fprintf(stderr, "%s: the reference reads nothing (%s), cutrace exited %d\n", what, err, p.code);
    ctt_proc_free(&p);
    return ok ? 0 : -1;
}

static int damage(const char *src, const char *name, unsigned seed)
{
    size_t len;
    char *data = ctt_read_file(src, &len), path[4200], what[4300];
    if (!data || len < 64)
        return -1;
    snprintf(path, sizeof path, "%s/%s.cutrace", ctt_tmpdir(), name);
    int bad = 0;
    for (int k = 1; k < 8 && !bad; k++) {
        snprintf(what, sizeof what, "%s cut at %d/8", name, k);
        bad = write_file(path, data, len * (size_t)k / 8) || check_damaged(path, what);
    }
    srand(seed);
    for (int k = 0; k < 6 && !bad; k++) {
        char *copy = malloc(len);
        memcpy(copy, data, len);
        for (int i = 0; i < 1 + k; i++) /* past the file header, which must be intact */
            copy[64 + (size_t)rand() % (len - 64)] ^= (char)(1 + rand() % 255);
        snprintf(what, sizeof what, "%s with %d bytes overwritten (seed %u)", name, 1 + k, seed);
        bad = write_file(path, copy, len) || check_damaged(path, what);
        free(copy);
    }
    free(data);
    return bad;
}

TEST_IMPL(damaged_traces)
{
    char dir[4096], src[4200], name[64];
    for (unsigned seed = 1; seed <= 12; seed++) {
        char args[32];
        snprintf(args, sizeof args, "--random %u", seed);
        snprintf(name, sizeof name, "random%u", seed);
        ASSERT(an_gen(dir, name, args));
        snprintf(src, sizeof src, "%s/random-0.cutrace", dir);
        snprintf(name, sizeof name, "random%u-damaged", seed);
        ASSERT_INT(damage(src, name, seed), ==, 0);
    }
    ASSERT(an_gen(dir, "loop", "--iters 30"));
    snprintf(src, sizeof src, "%s/rank-0.cutrace", dir);
    ASSERT_INT(damage(src, "loop-damaged", 99), ==, 0);
    return 0;
}
