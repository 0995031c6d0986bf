/* -j/--jobs: summary, report and export model files on worker threads and merge them in file
 * order, so that their output is the same bytes for any number of jobs (analyzer/README.md);
 * and reading many files holds the decoding of those being read, not of all. */
#define _GNU_SOURCE
#include "an_helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The outputs compared, each written with -j 1, 2 and 3 ({} the traces, OUT the output path). */
static const struct {
    const char *name, *args;
    int to_file;                  /* the output is OUT (1: a file, 2: a directory) */
} outputs[] = {
    {"summary --json", "summary -j %d --json --overview 50 --variants {}", 0},
    {"summary", "summary -j %d {}", 0},
    {"report", "report -j %d -o %s {}", 1},
    {"export --sqlite", "export -j %d --sqlite %s {}", 1},
    {"export --csv", "export -j %d --csv %s {}", 2},
};

static int spit(const char *path, const char *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(buf, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Runs output k with jobs into tag's file under the tmpdir; returns its path in out (the
 * stdout itself for stdout outputs, written to a file) and its exit status in *code. 0 or 1
 * (failed, printed). */
static int run_one(int k, int jobs, const char *path, const char *tag, char out[4096], int *code)
{
    snprintf(out, 4096, "%s/%s-%d-j%d", ctt_tmpdir(), tag, k, jobs);
    char args[8192];
    if (outputs[k].to_file)
        snprintf(args, sizeof args, outputs[k].args, jobs, out);
    else
        snprintf(args, sizeof args, outputs[k].args, jobs);
    ctt_proc p;
    ASSERT_INT(an_run(&p, args, path), ==, 0);
    if (!p.exited || (p.code != 0 && p.code != 3)) {
        fprintf(stderr, "%s on %s: exit %d: %s\n", args, path, p.code, p.err);
        ctt_proc_free(&p);
        return 1;
    }
    *code = p.code;
    if (!outputs[k].to_file)
        ASSERT_INT(spit(out, p.out, p.out_len), ==, 0);
    else if (p.code) /* unreadable input: nothing written */
        ASSERT_INT(access(out, F_OK), !=, 0);
    ctt_proc_free(&p);
    return 0;
}

/* Files (or directories, recursively) a and b hold the same bytes. */
static int same_bytes(const char *a, const char *b)
{
    ctt_proc p;
    char *argv[] = {"diff", "-r", (char *)a, (char *)b, NULL};
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    int same = p.exited && p.code == 0;
    ctt_proc_free(&p);
    return same;
}

/* Every output on path is the same with -j 1, 2 and 3. */
static int same_for_jobs(const char *path, const char *tag)
{
    for (size_t k = 0; k < sizeof outputs / sizeof *outputs; k++) {
        char one[4096], other[4096];
        int code1, code;
        if (run_one((int)k, 1, path, tag, one, &code1))
            return 1;
        for (int jobs = 2; jobs <= 3; jobs++) {
            if (run_one((int)k, jobs, path, tag, other, &code))
                return 1;
            ASSERT_INT(code, ==, code1);
            ASSERT_INT(code, ==, 0);
            if (!code && !same_bytes(one, other)) {
                fprintf(stderr, "%s of %s: -j %d differs from -j 1 (%s, %s)\n", outputs[k].name, path,
                        jobs, one, other);
                return 1;
            }
        }
    }
    return 0;
}

/* Synthetic runs of many ranks: stragglers, call stacks, allocation churn, graphs. */
TEST_IMPL(jobs_same_output_multi_rank)
{
    char dir[4096];
    ASSERT(an_gen(dir, "r16", "--ranks 16 --iters 12 --loader-ms 2 --straggler 2 --stacks-all --churn"));
    ASSERT_INT(same_for_jobs(dir, "r16"), ==, 0);
    ASSERT(an_gen(dir, "g5", "--ranks 5 --iters 8 --graph --events 50"));
    ASSERT_INT(same_for_jobs(dir, "g5"), ==, 0);
    return 0;
}

/* Files whose rows outgrow what a file waiting for its turn keeps (4 MiB: about 50,000 rows
 * each here), so that workers wait in the middle of their pass: the export is still the same. */
TEST_IMPL(jobs_export_waits_for_its_turn)
{
    char dir[4096];
    ASSERT(an_gen(dir, "big3", "--ranks 3 --iters 400 --kernels 40 --stacks-all --churn"));
    for (int k = 3; k <= 4; k++) { /* export --sqlite, --csv */
        char one[4096], other[4096];
        int code;
        ASSERT_INT(run_one(k, 1, dir, "big3", one, &code), ==, 0);
        ASSERT_INT(code, ==, 0);
        ASSERT_INT(run_one(k, 3, dir, "big3", other, &code), ==, 0);
        ASSERT_INT(code, ==, 0);
        if (!same_bytes(one, other)) {
            fprintf(stderr, "%s: -j 3 differs from -j 1 (%s, %s)\n", outputs[k].name, one, other);
            return 1;
        }
    }
    return 0;
}

static int copy_cut(const char *from, const char *to, double keep, long flip_at)
{
    size_t len;
    char *buf = ctt_read_file(from, &len);
    ASSERT(buf);
    if (flip_at >= 0 && (size_t)flip_at < len)
        for (size_t i = (size_t)flip_at; i < len && i < (size_t)flip_at + 64; i++)
            buf[i] = (char)~buf[i];
    int rc = spit(to, buf, (size_t)((double)len * keep));
    free(buf);
    ASSERT_INT(rc, ==, 0);
    return 0;
}

/* Damaged ranks among good ones: a file cut in a chunk, one with a damaged chunk, one cut in
 * its first chunks; and the robustness suite's regression traces a reader opens, all at once.
 * Each is read (exit 0), its damage warned about. */
TEST_IMPL(jobs_same_output_damaged)
{
    char dir[4096], set[4096], from[4400], to[4400];
    ASSERT(an_gen(dir, "r6", "--ranks 6 --iters 30 --loader-ms 2 --stacks-all --churn"));
    snprintf(set, sizeof set, "%s/damaged", ctt_tmpdir());
    ASSERT_INT(mkdir(set, 0755), ==, 0);
    for (int r = 0; r < 6; r++) {
        snprintf(from, sizeof from, "%s/rank-%d.cutrace", dir, r);
        snprintf(to, sizeof to, "%s/rank-%d.cutrace", set, r);
        ASSERT_INT(copy_cut(from, to, r == 2 ? 0.6 : r == 5 ? 0.1 : 1, r == 4 ? 3000 : -1), ==, 0);
    }
    ASSERT_INT(same_for_jobs(set, "damaged"), ==, 0);
    snprintf(set, sizeof set, "%s/regress", ctt_tmpdir());
    ASSERT_INT(mkdir(set, 0755), ==, 0);
    DIR *d = opendir(AN_ROOT "/tests/robust/regress");
    ASSERT(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".cutrace"))
            continue;
        snprintf(from, sizeof from, "%s/tests/robust/regress/%s", AN_ROOT, e->d_name);
        /* those a reader opens (some are kept as the fuzzer wrote them, checksums broken) */
        ctt_proc p;
        ASSERT_INT(an_run(&p, "dump {}", from), ==, 0);
        int readable = p.exited && p.code == 0;
        ctt_proc_free(&p);
        if (!readable)
            continue;
        snprintf(to, sizeof to, "%s/%s", set, e->d_name);
        ASSERT_INT(copy_cut(from, to, 1, -1), ==, 0);
        n++;
    }
    closedir(d);
    ASSERT_INT(n, >=, 5);
    ASSERT_INT(same_for_jobs(set, "regress"), ==, 0);
    return 0;
}

/* The corpus: each trace directory, all of them at once, and the shared traces. */
TEST_IMPL(jobs_same_output_corpus)
{
    ASSERT_INT(same_for_jobs(AN_ROOT "/tests/corpus/traces", "corpus"), ==, 0);
    DIR *d = opendir(AN_ROOT "/tests/corpus/traces");
    ASSERT(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/tests/corpus/traces/%s", AN_ROOT, e->d_name);
        ASSERT_INT(same_for_jobs(dir, e->d_name), ==, 0);
    }
    closedir(d);
    if (access(AN_SHARED_TRACES, R_OK) == 0)
        ASSERT_INT(same_for_jobs(AN_SHARED_TRACES, "shared"), ==, 0);
    return 0;
}

/* Peak resident KiB of `cutrace summary -j 1 --json DIR` (its own rusage). */
/* overview: with --overview 3000, the report's (a pass of its own finds the busiest stretch) */
static long summary_rss_kb(const char *dir, int overview)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        if (overview)
            execl(an_cutrace(), "cutrace", "summary", "-j", "1", "--json", "--overview", "3000", dir,
                  (char *)NULL);
        else
            execl(an_cutrace(), "cutrace", "summary", "-j", "1", "--json", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return ru.ru_maxrss;
}

/* Files whose chunks decode to 1 MiB each (a busy tracer's ring) cost the merged reader their
 * open chunks each, at once: 2 MiB and more a file (a host chunk and a GPU chunk), 4.9 MiB a
 * file measured when it read 64 of them (peak RSS 315 MB). Read file by file, a further file
 * costs only its model (0.7 MiB measured); the bound is the largest chunk of a file. The same
 * with the overview a report always has, whose search for the busiest stretch is a pass of its
 * own (it read every file at once: 4.2 MiB a further file; now 0.96 MiB, its slice ends). */
#define JOBS_FILES 24
TEST_IMPL(jobs_memory_bounded_by_workers)
{
    if (strstr(an_cutrace(), "/asan/"))
        ctt_skip("memory is measured on the plain build");
    char dir[4096], one[4096], many[4096], from[4200], to[4200];
    ASSERT(an_gen(dir, "dense", "--ranks 1 --iters 60 --kernels 3000 --kernel-us 1 --launch-us 1 --loader-ms 0"));
    /* its largest chunk, as dump shows it */
    ctt_proc p;
    ASSERT_INT(an_run(&p, "dump {}", dir), ==, 0);
    long chunk = 0;
    for (const char *s = p.out; (s = strstr(s, " raw=")); s++)
        if (atol(s + 5) > chunk)
            chunk = atol(s + 5);
    ctt_proc_free(&p);
    ASSERT_INT(chunk, >=, 1 << 19);
    snprintf(one, sizeof one, "%s/one", ctt_tmpdir());
    snprintf(many, sizeof many, "%s/many", ctt_tmpdir());
    ASSERT_INT(mkdir(one, 0755), ==, 0);
    ASSERT_INT(mkdir(many, 0755), ==, 0);
    snprintf(from, sizeof from, "%s/rank-0.cutrace", dir);
    snprintf(to, sizeof to, "%s/rank-0.cutrace", one);
    ASSERT_INT(copy_cut(from, to, 1, -1), ==, 0);
    for (int i = 0; i < JOBS_FILES; i++) {
        snprintf(to, sizeof to, "%s/rank-%d.cutrace", many, i);
        ASSERT_INT(copy_cut(from, to, 1, -1), ==, 0);
    }
    for (int overview = 0; overview < 2; overview++) {
        long r1 = summary_rss_kb(one, overview), rn = summary_rss_kb(many, overview);
        ASSERT_INT(r1, >, 0);
        ASSERT_INT(rn, >, 0);
        long per_file = (rn - r1) / (JOBS_FILES - 1);
        fprintf(stderr, "jobs memory%s: 1 file %ld KiB, %d files %ld KiB: %ld KiB a further file "
                        "(largest chunk %ld KiB)\n", overview ? " with --overview" : "", r1,
                JOBS_FILES, rn, per_file, chunk / 1024);
        ASSERT_INT(per_file, <, chunk / 1024);
    }
    return 0;
}

TEST_IMPL(jobs_usage)
{
    static const char *const bad[][2] = {{"summary -j 0 {}", "got '0'"},
                                         {"summary --jobs x {}", "got 'x'"},
                                         {"report -j -3 -o r.html {}", "got '-3'"},
                                         {"summary -j 1.5 {}", "got '1.5'"},
                                         {"summary -j 2000 {}", "1..1024"}};
    char dir[4096];
    ASSERT(an_gen(dir, "u", "--ranks 2 --iters 2"));
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ctt_proc p;
        ASSERT_INT(an_run(&p, bad[i][0], dir), ==, 0);
        ASSERT_INT(p.code, ==, 2);
        ASSERT_CONTAINS(p.err, "-j/--jobs expects a number of jobs");
        ASSERT_CONTAINS(p.err, bad[i][1]);
        ctt_proc_free(&p);
    }
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary --help", dir), ==, 0);
    ASSERT_CONTAINS(p.out, "-j, --jobs N");
    ctt_proc_free(&p);
    return 0;
}
