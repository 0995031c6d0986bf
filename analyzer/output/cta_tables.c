#include "cta_tables.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zlib.h>

#include "cta_map.h"
#include "cta_out.h"

#define CTA_COL_NAME_(t, n, ty) #n,
#define CTA_COL_TYPE_(t, n, ty) #ty,
#define CTA_TAB_NAMES_(id, name, cols, per) static const char *const id##_names[] = {cols(CTA_COL_NAME_, id)};
#define CTA_TAB_TYPES_(id, name, cols, per) static const char *const id##_types[] = {cols(CTA_COL_TYPE_, id)};
CTA_TABLES(CTA_TAB_NAMES_)
CTA_TABLES(CTA_TAB_TYPES_)

#define CTA_TAB_WIDTH_(id, name, cols, per) _Static_assert(CTA_##id##_NCOLS <= 32, #id " is wider than MAX_COLS");
CTA_TABLES(CTA_TAB_WIDTH_)

static const struct {
    const char *name;
    int ncols, per_trace;
    const char *const *cols, *const *types;
} tabs[] = {
#define CTA_TAB_DEF_(id, name, cols, per) {name, CTA_##id##_NCOLS, per, id##_names, id##_types},
    CTA_TABLES(CTA_TAB_DEF_)
};

const char *cta_table_name(int t) { return tabs[t].name; }
int cta_table_ncols(int t) { return tabs[t].ncols; }
const char *cta_table_col(int t, int c) { return tabs[t].cols[c]; }
const char *cta_table_type(int t, int c) { return tabs[t].types[c]; }
int cta_table_per_trace(int t) { return tabs[t].per_trace; }

/* The engines' names of the types (DuckDB and Spark SQL both take them): SQLite's INTEGER is
 * 64-bit, theirs 32-bit. */
static const char *engine_type(const char *type)
{
    return !strcmp(type, "INTEGER") ? "BIGINT" : !strcmp(type, "REAL") ? "DOUBLE" : "STRING";
}

const char *cta_table_create_sql(int t, int engines, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "CREATE TABLE %s (", tabs[t].name);
    for (int c = 0; c < tabs[t].ncols && at < len; c++)
        at += (size_t)snprintf(buf + at, len - at, "%s\"%s\" %s%s", c ? ", " : "", tabs[t].cols[c],
                               engines ? engine_type(tabs[t].types[c]) : tabs[t].types[c],
                               t == CTA_TAB_STRINGS && c == 0 && !engines ? " PRIMARY KEY" : "");
    if (at < len)
        snprintf(buf + at, len - at, ");");
    return buf;
}

/* CSV: gzip streams open at once, at most; one evicted is finished as a gzip member and a later
 * row appends another member to its file (a multi-member gzip file is one file to gzip, DuckDB
 * and Spark), so memory stays bounded however many traces there are. */
#define CSV_OPEN_MAX 64
#define SQLITE_ROWS_PER_TX 100000

typedef struct {
    gzFile gz;
    uint32_t file;
    int table;
    uint64_t used;                /* LRU clock */
} csv_slot;

struct cta_tables {
    /* SQLite */
    sqlite3 *db;
    sqlite3_stmt *ins[CTA_TAB_N];
    char *path, *tmp;
    uint64_t in_tx;
    /* CSV */
    char *dir;
    csv_slot open[CSV_OPEN_MAX];
    uint64_t clock;
    uint8_t *started;             /* per (file, table): its file exists (header written) */
    size_t started_cap;
    /* both */
    char *text;                   /* a text value made valid UTF-8 */
    size_t text_cap;
    cta_map strings;
    uint64_t rows;
};

static int db_fail(cta_tables *t, const char *what)
{
    fprintf(stderr, "cutrace export: error: %s: %s: %s\n", t->tmp, what, sqlite3_errmsg(t->db));
    return -1;
}

static int db_exec(cta_tables *t, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(t->db, sql, NULL, NULL, &err) == SQLITE_OK)
        return 0;
    fprintf(stderr, "cutrace export: error: %s: %s: %s\n", t->tmp, sql, err ? err : "?");
    sqlite3_free(err);
    return -1;
}

static cta_tables *tables_new(void)
{
    cta_tables *t = cta_xmalloc(sizeof *t, "the export");
    memset(t, 0, sizeof *t);
    cta_map_init(&t->strings);
    return t;
}

cta_tables *cta_tables_sqlite(const char *path)
{
    cta_tables *t = tables_new();
    size_t n = strlen(path);
    t->path = strdup(path);
    t->tmp = cta_xmalloc(n + 16, "the export");
    snprintf(t->tmp, n + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(t->tmp);
    /* the permissions a new file gets (mkstemp makes it private) */
    mode_t um = umask(0);
    umask(um);
    if (fd >= 0 && fchmod(fd, 0666 & ~um) != 0) {
        close(fd);
        unlink(t->tmp);
        fd = -1;
    }
    if (fd < 0) {
        fprintf(stderr, "cutrace export: error: %s: cannot create a file beside it: %s\n", path,
                strerror(errno));
        free(t->tmp);
        t->tmp = NULL;
        cta_tables_close(t, 0);
        return NULL;
    }
    close(fd);
    char sql[2048];
    if (sqlite3_open(t->tmp, &t->db) != SQLITE_OK) {
        db_fail(t, "cannot open as SQLite");
        cta_tables_close(t, 0);
        return NULL;
    }
    /* a failed export is removed, never used: no journal, no fsync per transaction */
    if (db_exec(t, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;") != 0)
        goto fail;
    for (int i = 0; i < CTA_TAB_N; i++) {
        if (db_exec(t, cta_table_create_sql(i, 0, sql, sizeof sql)) != 0)
            goto fail;
        size_t at = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (", tabs[i].name);
        for (int c = 0; c < tabs[i].ncols; c++)
            at += (size_t)snprintf(sql + at, sizeof sql - at, c ? ",?" : "?");
        snprintf(sql + at, sizeof sql - at, ")");
        if (sqlite3_prepare_v2(t->db, sql, -1, &t->ins[i], NULL) != SQLITE_OK) {
            db_fail(t, "cannot prepare an insert");
            goto fail;
        }
    }
    return t;
fail:
    cta_tables_close(t, 0);
    return NULL;
}

/* Whether dir holds anything but . and .. */
static int dir_used(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            break;
    int used = !d || e;
    if (d)
        closedir(d);
    return used;
}

cta_tables *cta_tables_csv(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cutrace export: error: %s: cannot create the directory: %s\n", dir, strerror(errno));
        return NULL;
    }
    if (dir_used(dir)) {
        fprintf(stderr, "cutrace export: error: %s: expected a new or empty directory, found one "
                "that is not (an earlier export's files would mix with these)\n", dir);
        return NULL;
    }
    cta_tables *t = tables_new();
    t->dir = strdup(dir);
    size_t n = strlen(dir) + 64;
    char *p = cta_xmalloc(n, "the export");
    snprintf(p, n, "%s/schema.sql", dir);
    FILE *f = fopen(p, "w");
    char sql[2048];
    for (int i = 0; f && i < CTA_TAB_N; i++)
        fprintf(f, "%s\n", cta_table_create_sql(i, 1, sql, sizeof sql));
    if (!f || ferror(f) | fclose(f)) {
        fprintf(stderr, "cutrace export: error: %s: cannot write the schema: %s\n", p, strerror(errno));
        free(p);
        cta_tables_close(t, 0);
        return NULL;
    }
    free(p);
    return t;
}

static int csv_close_slot(cta_tables *t, csv_slot *s)
{
    int rc = gzclose(s->gz);
    s->gz = NULL;
    if (rc != Z_OK) {
        fprintf(stderr, "cutrace export: error: %s/%s: write failed (zlib %d)\n", t->dir,
                tabs[s->table].name, rc);
        return -1;
    }
    return 0;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled; NULL is an
 * empty field, the empty string "". A text a spreadsheet would take for a formula (its first
 * character one of = + - @, tab or CR) is quoted with a ' before it, as OWASP advises against
 * CSV injection: the cell then shows as the text it is. A text starting with ' gets one too, so
 * that removing one leading ' always gives the value back. */
static void csv_text(gzFile gz, const char *s)
{
    int formula = *s && strchr("=+-@\t\r'", *s);
    if (*s && !formula && !strpbrk(s, ",\"\r\n")) {
        gzputs(gz, s);
        return;
    }
    gzputc(gz, '"');
    if (formula)
        gzputc(gz, '\'');
    for (; *s; s++) {
        if (*s == '"')
            gzputc(gz, '"');
        gzputc(gz, *s);
    }
    gzputc(gz, '"');
}

static gzFile csv_stream(cta_tables *t, int table, uint32_t file)
{
    if (!tabs[table].per_trace)
        file = UINT32_MAX;
    csv_slot *lru = &t->open[0];
    for (int i = 0; i < CSV_OPEN_MAX; i++) {
        csv_slot *s = &t->open[i];
        if (s->gz && s->table == table && s->file == file) {
            s->used = ++t->clock;
            return s->gz;
        }
        if (!s->gz || (lru->gz && s->used < lru->used))
            lru = s;
    }
    if (lru->gz && csv_close_slot(t, lru) != 0)
        return NULL;
    size_t key = (file == UINT32_MAX ? 0 : (size_t)file + 1) * CTA_TAB_N + (size_t)table;
    if (key >= t->started_cap) {
        size_t old = t->started_cap;
        cta_grow(&t->started, &t->started_cap, key + 1, 1);
        memset(t->started + old, 0, t->started_cap - old);
    }
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", t->dir, tabs[table].name);
    if (!t->started[key] && mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cutrace export: error: %s: cannot create the directory: %s\n", path, strerror(errno));
        return NULL;
    }
    if (file == UINT32_MAX)
        snprintf(path + n, sizeof path - (size_t)n, "/all.csv.gz");
    else
        snprintf(path + n, sizeof path - (size_t)n, "/trace-%u.csv.gz", file);
    gzFile gz = gzopen(path, t->started[key] ? "ab1" : "wb1");
    if (!gz) {
        fprintf(stderr, "cutrace export: error: %s: cannot create: %s\n", path, strerror(errno));
        return NULL;
    }
    *lru = (csv_slot){gz, file, table, ++t->clock};
    if (!t->started[key]) {
        for (int c = 0; c < tabs[table].ncols; c++) {
            if (c)
                gzputc(gz, ',');
            gzputs(gz, tabs[table].cols[c]);
        }
        gzputs(gz, "\r\n");
        t->started[key] = 1;
    }
    return gz;
}

static int csv_put(cta_tables *t, int table, uint32_t file, const cta_val *row)
{
    gzFile gz = csv_stream(t, table, file);
    if (!gz)
        return -1;
    for (int c = 0; c < tabs[table].ncols; c++) {
        if (c)
            gzputc(gz, ',');
        const cta_val *v = &row[c];
        if (v->kind == CTA_V_INT)
            gzprintf(gz, "%lld", (long long)v->i);
        else if (v->kind == CTA_V_REAL)
            gzprintf(gz, "%.17g", v->d);
        else if (v->kind == CTA_V_TEXT)
            csv_text(gz, v->s);
    }
    if (gzputs(gz, "\r\n") != 2) {
        int e;
        fprintf(stderr, "cutrace export: error: %s/%s: write failed: %s\n", t->dir, tabs[table].name,
                gzerror(gz, &e));
        return -1;
    }
    return 0;
}

static int db_put(cta_tables *t, int table, const cta_val *row)
{
    sqlite3_stmt *st = t->ins[table];
    for (int c = 0; c < tabs[table].ncols; c++) {
        const cta_val *v = &row[c];
        int rc = v->kind == CTA_V_INT    ? sqlite3_bind_int64(st, c + 1, v->i)
               : v->kind == CTA_V_REAL   ? sqlite3_bind_double(st, c + 1, v->d)
               : v->kind == CTA_V_TEXT   ? sqlite3_bind_text(st, c + 1, v->s, -1, SQLITE_STATIC)
                                         : sqlite3_bind_null(st, c + 1);
        if (rc != SQLITE_OK)
            return db_fail(t, "cannot bind a value");
    }
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_fail(t, tabs[table].name);
    if (++t->in_tx >= SQLITE_ROWS_PER_TX) {
        t->in_tx = 0;
        return db_exec(t, "COMMIT; BEGIN;");
    }
    return 0;
}

/* s with each byte that is not part of valid UTF-8 replaced by U+FFFD, as the summary's JSON
 * has it (DuckDB and Spark reject invalid UTF-8); s itself when valid. */
static const char *valid_utf8(cta_tables *t, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n, bad = 0;
    for (; *p; p += n ? n : 1)
        bad += !(n = cta_utf8_len(p));
    if (!bad)
        return s;
    cta_grow(&t->text, &t->text_cap, (size_t)(p - (const unsigned char *)s) + 2 * bad + 1, 1);
    char *o = t->text;
    for (p = (const unsigned char *)s; *p; p += n ? n : 1) {
        if ((n = cta_utf8_len(p)))
            memcpy(o, p, n), o += n;
        else
            memcpy(o, "\xEF\xBF\xBD", 3), o += 3;
    }
    *o = 0;
    return t->text;
}

#define MAX_COLS 32 /* the widest table has 20 */
int cta_tables_put(cta_tables *t, int table, uint32_t file, const cta_val *row)
{
    cta_val v[MAX_COLS];
    char *own[MAX_COLS] = {0};
    int n = tabs[table].ncols, copied = 0;
    for (int c = 0; c < n; c++) {
        const char *s = row[c].kind == CTA_V_TEXT ? valid_utf8(t, row[c].s) : NULL;
        if (s && s != row[c].s) { /* rare: a text kept apart while the others are checked */
            if (!copied)
                memcpy(v, row, (size_t)n * sizeof *v), copied = 1;
            v[c].s = own[c] = strdup(s);
        }
    }
    t->rows++;
    int rc = t->db ? db_put(t, table, copied ? v : row) : csv_put(t, table, file, copied ? v : row);
    for (int c = 0; copied && c < n; c++)
        free(own[c]);
    return rc;
}

int64_t cta_tables_string(cta_tables *t, const char *s)
{
    int added;
    uint32_t i = cta_map_get(&t->strings, s, strlen(s) + 1, &added);
    if (added) {
        cta_val row[CTA_STRINGS_NCOLS] = {[CTA_STRINGS_id] = cta_vi(i), [CTA_STRINGS_value] = cta_vs(s)};
        if (cta_tables_put(t, CTA_TAB_STRINGS, 0, row) != 0)
            return -1;
    }
    return i;
}

int cta_tables_trace_done(cta_tables *t, uint32_t file)
{
    if (t->db)
        return 0;
    for (int i = 0; i < CTA_TAB_N; i++) {
        size_t key = ((size_t)file + 1) * CTA_TAB_N + (size_t)i;
        if (tabs[i].per_trace && (key >= t->started_cap || !t->started[key]) && !csv_stream(t, i, file))
            return -1;
    }
    return 0;
}

int cta_tables_exec(cta_tables *t, const char *sql)
{
    return t->db ? db_exec(t, sql) : 0;
}

uint64_t cta_tables_rows(const cta_tables *t) { return t->rows; }

int cta_tables_close(cta_tables *t, int ok)
{
    int rc = ok ? 0 : -1;
    if (t->db) {
        if (ok && db_exec(t, "COMMIT;") != 0)
            rc = -1;
        for (int i = 0; i < CTA_TAB_N; i++)
            sqlite3_finalize(t->ins[i]);
        if (sqlite3_close(t->db) != SQLITE_OK && ok) {
            fprintf(stderr, "cutrace export: error: %s: cannot close\n", t->tmp);
            rc = -1;
        }
    }
    if (t->tmp) {
        if (rc == 0 && rename(t->tmp, t->path) != 0) {
            fprintf(stderr, "cutrace export: error: %s: cannot rename %s over it: %s\n", t->path,
                    t->tmp, strerror(errno));
            rc = -1;
        }
        if (rc != 0)
            unlink(t->tmp);
    }
    for (int i = 0; i < CSV_OPEN_MAX; i++)
        if (t->open[i].gz && csv_close_slot(t, &t->open[i]) != 0)
            rc = -1;
    cta_map_free(&t->strings);
    free(t->text);
    free(t->started);
    free(t->path);
    free(t->tmp);
    free(t->dir);
    free(t);
    return rc;
}
