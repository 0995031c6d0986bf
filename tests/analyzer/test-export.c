/* `cutrace export`: the example queries of analyzer/SQLITE.md, run by the sqlite3 command on an
 * exported trace, give what `cutrace summary --json` and the traced program itself count; the
 * CSV export holds the SQLite export's rows; the GPU idle gaps the SQL view finds add up to the
 * summary's idle time per rank. sqlite3 (Debian) is installed with apt-get when missing; the
 * tests are skipped when it cannot be. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "an_helpers.h"

/* sqlite3 --version works, after installing it if needed (once per process). */
static void need_sqlite3(void)
{
    static int ok = -1;
    char *ver[] = {"sqlite3", "--version", NULL};
    ctt_proc p;
    if (ok < 0) {
        ok = ctt_run(&p, ver, NULL, 30) == 0 && p.exited && p.code == 0;
        if (ok >= 0 && !ok && getuid() == 0 && access("/usr/bin/apt-get", X_OK) == 0) {
            char *inst[] = {"sh", "-c", "apt-get install -y -qq sqlite3 >/dev/null 2>&1 || "
                            "{ apt-get update -qq && apt-get install -y -qq sqlite3; } >/dev/null 2>&1", NULL};
            ctt_proc q;
            char *env[] = {"DEBIAN_FRONTEND=noninteractive", NULL};
            if (ctt_run(&q, inst, env, 600) == 0)
                ctt_proc_free(&q);
            ctt_proc_free(&p);
            ok = ctt_run(&p, ver, NULL, 30) == 0 && p.exited && p.code == 0;
        }
        ctt_proc_free(&p);
    }
    if (!ok)
        ctt_skip("the sqlite3 command is missing and could not be installed (apt-get install sqlite3)");
}

/* The output of `sqlite3 DB SQL` (tab-separated, no header), or NULL after printing why. */
static char *sql(const char *db, const char *query)
{
    need_sqlite3();
    char *argv[] = {"sqlite3", "-batch", "-bail", "-separator", "\t", (char *)db, (char *)query, NULL};
    ctt_proc p;
    if (ctt_run(&p, argv, NULL, 120) != 0)
        return NULL;
    char *out = NULL;
    if (p.exited && p.code == 0 && !p.err[0]) {
        out = p.out;
        p.out = NULL;
    } else {
        fprintf(stderr, "sqlite3 %s: %s\n%s\n", db, p.err, query);
    }
    ctt_proc_free(&p);
    return out;
}

/* The example query `name` of SQLITE.md: the lines after "-- example: NAME" up to the fence. */
static char *example(const char *name)
{
    char *doc = ctt_read_file(AN_SQLITE_MD, NULL);
    if (!doc)
        return NULL;
    char tag[128];
    snprintf(tag, sizeof tag, "-- example: %s\n", name);
    char *q = strstr(doc, tag), *end = q ? strstr(q, "```") : NULL;
    char *r = NULL;
    if (end) {
        q += strlen(tag);
        r = strndup(q, (size_t)(end - q));
    } else {
        fprintf(stderr, "%s: no query tagged '%s'\n", AN_SQLITE_MD, tag);
    }
    free(doc);
    return r;
}

/* Runs SQLITE.md's example `name` on db; each line's tab-separated fields in f[line][col]. */
#define MAXL 256
static int rows_of(const char *db, const char *name, char *f[MAXL][4], char **keep)
{
    char *q = example(name);
    *keep = q ? sql(db, q) : NULL;
    free(q);
    if (!*keep)
        return -1;
    int n = 0;
    char *save;
    for (char *line = strtok_r(*keep, "\n", &save); line && n < MAXL; line = strtok_r(NULL, "\n", &save), n++) {
        for (int c = 0; c < 4; c++) {
            f[n][c] = line;
            line = strchr(line, '\t');
            if (line)
                *line++ = 0;
            else
                line = "";
        }
    }
    return n;
}

static const char *export_to(const char *dir, const char *opt, const char *name)
{
    static char out[4096];
    char args[4200];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), name);
    snprintf(args, sizeof args, "export %s %s {}", opt, out);
    ctt_proc p;
    int ok = an_run(&p, args, dir) == 0 && p.exited && p.code == 0;
    if (!ok)
        fprintf(stderr, "cutrace %s: %d %s\n", args, p.code, p.err);
    ctt_proc_free(&p);
    return ok ? out : NULL;
}

/* train_loop, with its NVTX ranges and its own counts (the demo's program, shorter). */
static const char *trace_train_loop(char dir[4096], char nvtx[4096], char **out)
{
    snprintf(nvtx, 4096, "%s/nvtx.txt", ctt_tmpdir());
    char args[4200];
    snprintf(args, sizeof args, "train_loop --iters 10 --loader-ms 5 --nvtx %s", nvtx);
    return an_trace_workload(dir, "train", args, NULL, out);
}

TEST_IMPL(export_sqlite_queries_match_summary)
{
    char dir[4096], nvtx[4096], *out, *keep;
    ASSERT(trace_train_loop(dir, nvtx, &out));
    ASSERT_CONTAINS(out, "totals h2d=10 h2d_bytes=41943040 kernels=330 d2h=10 d2h_bytes=40");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    char db[4096];
    snprintf(db, sizeof db, "%s", export_to(dir, "--sqlite", "t.sqlite") ?: "");
    ASSERT(db[0]);
    char *f[MAXL][4];

    /* kernels: per name, the timed instances and their GPU time; 330 in all, as launched */
    int n = rows_of(db, "kernels", f, &keep);
    ASSERT_INT(n, >, 0);
    const tj *kernels = tj_get(s, "kernels");
    size_t timed = 0;
    for (size_t i = 0; i < kernels->n; i++)
        timed += tj_num(kernels->v[i], "timed_instances") > 0;
    ASSERT_UINT((size_t)n, ==, timed);
    long all = 0;
    for (int i = 0; i < n; i++) {
        const tj *k = tj_find(kernels, "name", f[i][0]);
        ASSERT(k != NULL);
        ASSERT_INT(atol(f[i][1]), ==, (long)tj_num(k, "timed_instances"));
        ASSERT_INT(atol(f[i][2]), ==, (long)tj_num(k, "end_bounded"));
        if (tj_num(k, "end_bounded") == 0)
            ASSERT_INT(atol(f[i][3]), ==, (long)tj_num(k, "total_ns"));
        all += atol(f[i][1]);
    }
    ASSERT_INT(all, ==, 330);
    free(keep);

    /* copies: count and bytes per kind, as the summary sums them over host memory kinds; the
     * program's 10 read-backs of 4 bytes */
    static const struct { const char *label, *op; } kinds[] = {
        {"Host-to-Device", "H2D"}, {"Device-to-Host", "D2H"}, {"Device-to-Device", "D2D"}, {"Peer-to-Peer", "P2P"}};
    n = rows_of(db, "copies", f, &keep);
    ASSERT_INT(n, >, 0);
    const tj *copies = tj_get(s, "copies");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        double count = 0, bytes = 0;
        for (size_t i = 0; i < copies->n; i++)
            if (!strcmp(tj_str(copies->v[i], "op"), kinds[k].op)) {
                count += tj_num(copies->v[i], "count");
                bytes += tj_num(copies->v[i], "bytes");
            }
        long got_n = 0, got_b = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(f[i][0], kinds[k].label))
                got_n = atol(f[i][1]), got_b = atol(f[i][2]);
        ASSERT_INT(got_n, ==, (long)count);
        ASSERT_INT(got_b, ==, (long)bytes);
        if (!strcmp(kinds[k].op, "D2H")) {
            ASSERT_INT(got_n, ==, 10);
            ASSERT_INT(got_b, ==, 40);
        }
    }
    free(keep);

    /* API calls per function */
    n = rows_of(db, "api", f, &keep);
    ASSERT_UINT((size_t)n, ==, tj_len(s, "api"));
    for (int i = 0; i < n; i++) {
        const tj *a = tj_find(tj_get(s, "api"), "name", f[i][0]);
        ASSERT(a != NULL);
        ASSERT_INT(atol(f[i][1]), ==, (long)tj_num(a, "calls"));
    }
    free(keep);

    /* NVTX ranges: the summary's instances, and the ranges the program wrote down */
    n = rows_of(db, "nvtx", f, &keep);
    ASSERT_INT(n, ==, 1);
    double inst = 0;
    const tj *ranges = tj_path(s, "nvtx.ranges");
    for (size_t i = 0; i < ranges->n; i++)
        inst += tj_num(ranges->v[i], "instances");
    char *truth = ctt_read_file(nvtx, NULL);
    ASSERT(truth);
    long lines = 0;
    for (char *c = truth; *c; c++)
        lines += *c == '\n';
    free(truth);
    ASSERT_INT(lines, ==, 30);
    ASSERT_INT(atol(f[0][0]), ==, (long)inst);
    ASSERT_INT(atol(f[0][0]), ==, lines);
    free(keep);

    /* the diagnoses, in the summary's order, placed where it places them (the export's axis
     * starts at the trace's start, the summary's at its first activity: the process's start on
     * each gives the offset) */
    char *d = sql(db, "SELECT d.diagnosis, d.savingNs, d.atStart - p.start, d.atEnd - p.start "
                      "FROM CUTRACE_DIAGNOSES AS d JOIN CUTRACE_PROCESSES AS p USING (globalPid) ORDER BY d.id;");
    ASSERT(d);
    size_t nd = 0;
    char *save;
    double p0 = tj_num(s, "processes.0.start_ns");
    for (char *line = strtok_r(d, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nd++) {
        /* id, saving, start, end; a finding with no single place (JSON "at": null) has
         * empty cells there */
        char *cell[4], *rest = line, path[64];
        for (int c = 0; c < 4; c++)
            cell[c] = strsep(&rest, "\t");
        ASSERT(cell[3] != NULL && rest == NULL);
        snprintf(path, sizeof path, "diagnoses.%zu.id", nd);
        ASSERT_STR(cell[0], tj_str(s, path));
        snprintf(path, sizeof path, "diagnoses.%zu.estimated_saving_ns", nd);
        ASSERT_INT(atol(cell[1]), ==, (long)tj_num(s, path));
        snprintf(path, sizeof path, "diagnoses.%zu.at", nd);
        if (tj_path(s, path)->type == TJ_NULL) {
            ASSERT_STR(cell[2], "");
            ASSERT_STR(cell[3], "");
            continue;
        }
        snprintf(path, sizeof path, "diagnoses.%zu.at.start_ns", nd);
        ASSERT_INT(atol(cell[2]), ==, (long)(tj_num(s, path) - p0));
        snprintf(path, sizeof path, "diagnoses.%zu.at.end_ns", nd);
        ASSERT_INT(atol(cell[3]), ==, (long)(tj_num(s, path) - p0));
    }
    ASSERT_UINT(nd, ==, tj_len(s, "diagnoses"));
    ASSERT_UINT(nd, >, 0);
    free(d);

    /* the views answer as the checked queries do */
    const struct { const char *view, *example; long rows; } views[] = {
        {"SELECT name, instances, end_bounded, total_ns FROM CUTRACE_TOP_KERNELS", "kernels", (long)timed},
        {"SELECT kind, copies, bytes, gbps FROM CUTRACE_COPIES_BY_KIND", "copies", 2}, /* H2D, D2H */
        {"SELECT name, calls, total_ns FROM CUTRACE_API_SUMMARY", "api", (long)tj_len(s, "api")}};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        char *q = example(views[i].example), both[8192];
        ASSERT(q);
        q[strcspn(q, ";")] = 0;
        snprintf(both, sizeof both, "SELECT COUNT(*) FROM (%s), (SELECT COUNT(*) AS n FROM (%s "
                 "EXCEPT SELECT * FROM (%s))) WHERE n = 0;", views[i].view, views[i].view, q);
        free(q);
        char *res = sql(db, both);
        ASSERT(res);
        ASSERT_INT(atol(res), ==, views[i].rows); /* 0: the view has a row the query has not */
        free(res);
    }
    tj_free(s);
    return 0;
}

/* Every table of the CSV export holds the SQLite export's rows (values typed by schema.sql's
 * types; NULL and "" are one in CSV; a text cell's leading ' is the formula guard, SQLITE.md),
 * compared by Python's sqlite3, gzip and csv modules. */
static const char csv_check[] =
    "import csv, glob, gzip, os, sqlite3, sys\n"
    "db, d = sys.argv[1], sys.argv[2]\n"
    "con = sqlite3.connect(db)\n"
    "tables = [r[0] for r in con.execute(\"SELECT name FROM sqlite_master WHERE type = 'table'\")]\n"
    "schema = open(os.path.join(d, 'schema.sql')).read()\n"
    "bad = 0\n"
    "conv = {'INTEGER': int, 'REAL': float, 'TEXT': lambda v: v[1:] if v[:1] == \"'\" else v}\n"
    "for t in tables:\n"
    "    info = list(con.execute('PRAGMA table_info(\"%s\")' % t))\n"
    "    cols, types = [r[1] for r in info], [r[2] for r in info]\n"
    "    if 'CREATE TABLE %s (' % t not in schema:\n"
    "        print(t, 'not in schema.sql'); bad += 1\n"
    "    norm = lambda row: tuple(None if v == '' else v for v in row)\n"
    "    want = sorted((norm(r) for r in con.execute('SELECT * FROM \"%s\"' % t)), key=repr)\n"
    "    got = []\n"
    "    for path in sorted(glob.glob(os.path.join(d, t, '*.csv.gz'))):\n"
    "        with gzip.open(path, 'rt', newline='') as f:\n"
    "            rd = csv.reader(f)\n"
    "            if next(rd) != cols:\n"
    "                print(path, 'header differs'); bad += 1\n"
    "            for row in rd:\n"
    "                got.append(tuple(None if v == '' else conv[ty](v) for v, ty in zip(row, types)))\n"
    "    got.sort(key=repr)\n"
    "    if got != want:\n"
    "        print(t, 'CSV has', len(got), 'rows, SQLite', len(want)); bad += 1\n"
    "    print(t, len(want))\n"
    "sys.exit(1 if bad or not tables else 0)\n";

/* Runs csv_check on the SQLite and CSV exports (name.sqlite, name/) of the traces in dir; its
 * output in *out. */
static int csv_matches(const char *dir, const char *name, char **out)
{
    char db[4096], csvdir[4096], file[256];
    snprintf(file, sizeof file, "%s.sqlite", name);
    snprintf(db, sizeof db, "%s", export_to(dir, "--sqlite", file) ?: "");
    snprintf(csvdir, sizeof csvdir, "%s", export_to(dir, "--csv", name) ?: "");
    ASSERT(db[0] && csvdir[0]);
    char *argv[] = {"python3", "-c", (char *)csv_check, db, csvdir, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 120), ==, 0);
    if (!p.exited || p.code != 0)
        fprintf(stderr, "%s%s", p.out, p.err);
    int ok = p.exited && p.code == 0;
    *out = p.out;
    p.out = NULL;
    ctt_proc_free(&p);
    ASSERT(ok);
    return 0;
}

TEST_IMPL(export_csv_holds_the_sqlite_rows)
{
    char dir[4096], nvtx[4096], *out;
    ASSERT(trace_train_loop(dir, nvtx, &out));
    free(out);
    ASSERT_INT(csv_matches(dir, "csv-train", &out), ==, 0);
    /* the comparison covered rows of every kind */
    ASSERT_CONTAINS(out, "CUPTI_ACTIVITY_KIND_KERNEL 330\n");
    ASSERT_CONTAINS(out, "NVTX_EVENTS 30\n");
    ASSERT_CONTAINS(out, "CUTRACE_ALLOCATIONS 14\n");
    free(out);
    /* 16 ranks interleaved: more files than stay open (each reopened file is a further gzip
     * member), tables without rows (header only), a kernel name that is not UTF-8 */
    ASSERT(an_gen(dir, "r16", "--ranks 16 --iters 6 --loader-ms 2"));
    ASSERT_INT(csv_matches(dir, "csv-r16", &out), ==, 0);
    ASSERT_CONTAINS(out, "CUPTI_ACTIVITY_KIND_KERNEL 2880\n");
    ASSERT_CONTAINS(out, "CUPTI_ACTIVITY_KIND_MEMSET 0\n");
    free(out);
    return 0;
}

/* The answer of SQLITE.md's "busy" query (rank, device, window, idle, busy %, one line each)
 * for 16 ranks of one device: each rank's window and idle time are the summary's breakdown, its
 * busy share that of ranks[]. */
static int check_busy(char *res, const tj *s)
{
    int n = 0;
    char *save;
    for (char *line = strtok_r(res, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
        long rank, dev, win, idle;
        double busy;
        ASSERT_INT(sscanf(line, "%ld\t%ld\t%ld\t%ld\t%lf", &rank, &dev, &win, &idle, &busy), ==, 5);
        ASSERT_INT(rank, ==, n);
        ASSERT_INT(dev, ==, 0);
        char path[64];
        snprintf(path, sizeof path, "breakdown.%d.window_ns", n);
        ASSERT_INT(win, ==, (long)tj_num(s, path));
        snprintf(path, sizeof path, "breakdown.%d.gpu_idle_ns", n);
        ASSERT_INT(idle, ==, (long)tj_num(s, path));
        /* the JSON prints 6 significant digits */
        snprintf(path, sizeof path, "ranks.%d.gpu_busy_pct", n);
        ASSERT_NEAR(busy, tj_num(s, path), 1e-4);
        snprintf(path, sizeof path, "ranks.%d.gpu_idle_pct", n);
        ASSERT_NEAR(100.0 - busy, tj_num(s, path), 1e-4);
    }
    ASSERT_INT(n, ==, 16);
    return 0;
}

/* 16 ranks (tracegen) exported with opt into out (the test's tmpdir/name): their summary, or
 * NULL after printing why. */
static tj *ranks16(const char *opt, const char *name, char out[4096])
{
    char dir[4096];
    if (!an_gen(dir, "r16", "--ranks 16 --iters 6 --loader-ms 2"))
        return NULL;
    const char *to = export_to(dir, opt, name);
    if (!to)
        return NULL;
    snprintf(out, 4096, "%s", to);
    return an_summary(dir, NULL);
}

/* 16 ranks (tracegen): the GPU idle time per rank computed from the exported intervals by SQL,
 * independently of the analyzer's sweep, equals the summary's. */
TEST_IMPL(export_ranks_idle_from_intervals)
{
    char db[4096];
    tj *s = ranks16("--sqlite", "r.sqlite", db);
    ASSERT(s);
    char *q = example("busy");
    ASSERT(q);
    char *res = sql(db, q);
    free(q);
    ASSERT(res);
    int rc = check_busy(res, s);
    free(res);
    /* the gaps view's idle time per rank */
    res = sql(db, "SELECT p.rank, SUM(g.gap_ns) FROM CUTRACE_GPU_GAPS AS g JOIN CUTRACE_PROCESSES AS p "
                  "USING (globalPid) GROUP BY p.rank ORDER BY p.rank;");
    ASSERT(res);
    int n = 0;
    char *save;
    for (char *line = strtok_r(res, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
        long rank, idle;
        ASSERT_INT(sscanf(line, "%ld\t%ld", &rank, &idle), ==, 2);
        char path[64];
        snprintf(path, sizeof path, "breakdown.%ld.gpu_idle_ns", rank);
        ASSERT_INT(idle, ==, (long)tj_num(s, path));
    }
    ASSERT_INT(n, ==, 16);
    free(res);
    tj_free(s);
    return rc;
}

/* The same query in DuckDB (PyPI's, in the virtual environment tests/pytorch/venv.sh makes for
 * this suite) over the CSV export of the 16 ranks, its tables typed by schema.sql. */
/* DuckDB draws a progress bar on standard output over a query that outlasts 2 s (a loaded
 * machine's), which would come before the rows: it is turned off. */
static const char duckdb_busy[] =
    "import duckdb, sys\n"
    "d, q = sys.argv[1], sys.argv[2]\n"
    "db = duckdb.connect()\n"
    "db.execute('SET enable_progress_bar = false')\n"
    "db.execute(open(d + '/schema.sql').read())\n"
    "for t in ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUTRACE_PROCESSES']:\n"
    "    db.execute(\"COPY %s FROM '%s/%s/*.csv.gz' (HEADER)\" % (t, d, t))\n"
    "for row in db.execute(q).fetchall():\n"
    "    print('\\t'.join(repr(v) for v in row))\n";

TEST_IMPL(export_csv_ranks_in_duckdb)
{
    char py[4096];
    snprintf(py, sizeof py, "%s/bin/python",
             ctt_status_ok(AN_DUCKDB_STATUS, "DuckDB virtual environment", "tests/pytorch/venv.sh"));
    char csvdir[4096];
    tj *s = ranks16("--csv", "csv", csvdir);
    ASSERT(s);
    char *q = example("busy");
    ASSERT(q);
    char *argv[] = {py, "-c", (char *)duckdb_busy, csvdir, q, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 120), ==, 0);
    free(q);
    if (!p.exited || p.code != 0)
        fprintf(stderr, "duckdb: %s%s", p.out, p.err);
    ASSERT(p.exited && p.code == 0);
    int rc = check_busy(p.out, s);
    ctt_proc_free(&p);
    tj_free(s);
    return rc;
}

/* The database replaces an old file only once complete, with the permissions a new file gets;
 * a failure (an output in a missing directory, an unreadable trace) leaves the old file and no
 * temporary; usage errors name the problem. */
TEST_IMPL(export_replaces_the_file_whole)
{
    char dir[4096], out[4096], bad[4096], args[8400];
    ASSERT(an_gen(dir, "one", "--iters 3"));
    snprintf(out, sizeof out, "%s/old.sqlite", ctt_tmpdir());
    FILE *f = fopen(out, "w");
    ASSERT(f && fputs("old", f) >= 0 && fclose(f) == 0);
    ASSERT(chmod(out, 0600) == 0);
    ctt_proc p;
    snprintf(bad, sizeof bad, "%s/missing.cutrace", ctt_tmpdir());
    snprintf(args, sizeof args, "export --sqlite %s %s", out, bad);
    ASSERT_INT(an_run(&p, args, dir), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ctt_proc_free(&p);
    char *old = ctt_read_file(out, NULL);
    ASSERT(old);
    ASSERT_STR(old, "old");
    free(old);
    snprintf(args, sizeof args, "export --sqlite %s/no/such/dir/x.sqlite {}", ctt_tmpdir());
    ASSERT_INT(an_run(&p, args, dir), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "/no/such/dir/x.sqlite");
    ctt_proc_free(&p);
    snprintf(args, sizeof args, "export --sqlite %s {}", out);
    ASSERT_INT(an_run(&p, args, dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    char *n = sql(out, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL;");
    ASSERT(n);
    ASSERT_INT(atol(n), ==, 3 * 30);
    free(n);
    struct stat st;
    mode_t um = umask(0);
    umask(um);
    ASSERT(stat(out, &st) == 0);
    ASSERT_INT(st.st_mode & 0777, ==, 0666 & ~um);
    DIR *d = opendir(ctt_tmpdir());
    ASSERT(d);
    for (struct dirent *e; (e = readdir(d));)
        ASSERT(!strstr(e->d_name, ".tmp-"));
    closedir(d);
    /* a directory holding anything is not exported into: old files would mix with the new */
    snprintf(args, sizeof args, "export --csv %s {}", ctt_tmpdir());
    ASSERT_INT(an_run(&p, args, dir), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "expected a new or empty directory");
    ctt_proc_free(&p);
    char *usage[][6] = {{"export", "{}", NULL},
                        {"export", "--sqlite", out, "--csv", out, NULL},
                        {"export", "--sqlite", out, NULL},
                        {"export", "--top", "3", "--sqlite", out, NULL},
                        {"export", "-j", "0", "--sqlite", out, NULL},
                        {"export", "--jobs", "two", "--sqlite", out, NULL}};
    const char *why[] = {"expected one of --sqlite FILE or --csv DIR",
                         "expected one of --sqlite FILE or --csv DIR",
                         "expected at least one trace file or directory",
                         "--min-saving, --util-window and --jobs only",
                         "-j/--jobs expects a number of jobs 1..1024, got '0'",
                         "-j/--jobs expects a number of jobs 1..1024, got 'two'"};
    for (size_t i = 0; i < sizeof usage / sizeof *usage; i++) {
        args[0] = 0;
        for (char **a = usage[i]; *a; a++)
            snprintf(args + strlen(args), sizeof args - strlen(args), "%s%s", a == usage[i] ? "" : " ", *a);
        ASSERT_INT(an_run(&p, args, dir), ==, 0);
        ASSERT_INT(p.code, ==, 2);
        ASSERT_CONTAINS(p.err, why[i]);
        ctt_proc_free(&p);
    }
    return 0;
}

/* NVTX_EVENTS of tests/workloads/nvtx_ranges (its header lists what it makes): 240 nested
 * push/pops in 4 threads, one in a domain with a category and an int32 payload, 10000
 * PyTorch-style ones; 2001 start/end ranges, one ended in another thread; five marks, one with
 * a category, a color and a uint64 payload, two longer than the tracer keeps. The range begun
 * before the trace and the pop with nothing pushed are no rows. */
TEST_IMPL(export_nvtx_events_of_every_kind)
{
    char dir[4096], *out;
    char *env[] = {"CUTRACE_RING_KB=8192", NULL};
    ASSERT(an_trace_workload(dir, "kinds", "nvtx_ranges", env, &out));
    free(out);
    char db[4096];
    snprintf(db, sizeof db, "%s", export_to(dir, "--sqlite", "n.sqlite") ?: "");
    ASSERT(db[0]);
    static const struct { const char *q, *want; } checks[] = {
        {"SELECT eventType, COUNT(*) FROM NVTX_EVENTS GROUP BY 1 ORDER BY 1;", "34\t5\n59\t10241\n60\t2001\n"},
        {"SELECT COUNT(*) FROM NVTX_EVENTS WHERE text IN ('outer', 'middle', 'inner') AND eventType = 59;", "240\n"},
        {"SELECT COUNT(*) FROM NVTX_EVENTS WHERE text LIKE 'aten::add, seq = %, sizes = [[%]]';", "10000\n"},
        {"SELECT COUNT(*), COUNT(DISTINCT globalTid) FROM NVTX_EVENTS WHERE text = 'relay';", "2000\t1\n"},
        {"SELECT globalTid != endGlobalTid FROM NVTX_EVENTS WHERE text = 'handoff';", "1\n"},
        {"SELECT category, color, uint64Value, \"end\" IS NULL FROM NVTX_EVENTS WHERE text = 'mark-ex';",
         "3\t4278255360\t42\t1\n"},
        {"SELECT COUNT(*) FROM NVTX_EVENTS WHERE text = 'wide-\xc3\xa9\xe4\xb8\xad' AND eventType = 34;", "1\n"},
        /* the marks over the 512 bytes the tracer keeps: cut, with their length */
        {"SELECT length(CAST(text AS BLOB)) FROM NVTX_EVENTS WHERE text LIKE 'long-x%...[truncated, 1000 bytes]'"
         " OR text LIKE 'wide-long-%...[truncated, 610 bytes]' ORDER BY 1;", "511\n512\n"},
        {"SELECT domain, category, int32Value FROM NVTX_EVENTS WHERE text = 'registered-phase';",
         "cutrace-test\t7\t-5\n"},
        {"SELECT COUNT(*) FROM NVTX_EVENTS WHERE text = 'before-cuda' OR \"end\" < start;", "0\n"},
    };
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        char *res = sql(db, checks[i].q);
        ASSERT(res);
        if (strcmp(res, checks[i].want))
            fprintf(stderr, "%s\n", checks[i].q);
        ASSERT_STR(res, checks[i].want);
        free(res);
    }
    return 0;
}
