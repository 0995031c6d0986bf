/* fputs_unlocked and fwrite_unlocked: one thread writes an output, and the stdio lock that
 * glibc takes once the pass has started threads costs a call each for millions of characters */
#define _GNU_SOURCE
#include "cta_out.h"
#include "cta_map.h"
#include "cttrace.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- UTF-8 ---- */
size_t cta_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* ---- JSON ---- */
void cta_json_init(cta_json *j, FILE *f, int pretty)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->pretty = pretty;
    j->first[0] = 1;
}

static void newline(cta_json *j)
{
    if (!j->pretty)
        return;
    /* a newline and two spaces a level, in one write (depth < 64) */
#define CTA_SP16 "                "
    static const char indent[] = "\n" CTA_SP16 CTA_SP16 CTA_SP16 CTA_SP16 CTA_SP16 CTA_SP16 CTA_SP16 CTA_SP16;
#undef CTA_SP16
    _Static_assert(sizeof indent >= 2 + 2 * 63, "indentation for 63 levels");
    fwrite_unlocked(indent, 1, 1 + 2 * (size_t)j->depth, j->f);
}

/* Separator before a value (or key) at the current level. */
static void pre_value(cta_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (!j->first[j->depth])
        putc_unlocked(',', j->f);
    if (j->depth > 0)
        newline(j);
    j->first[j->depth] = 0;
}

static void open(cta_json *j, char c)
{
    pre_value(j);
    putc_unlocked(c, j->f);
    assert(j->depth + 1 < 64);
    j->first[++j->depth] = 1;
}

static void close(cta_json *j, char c)
{
    int empty = j->first[j->depth];
    j->depth--;
    if (!empty)
        newline(j);
    putc_unlocked(c, j->f);
    if (j->depth == 0)
        putc_unlocked('\n', j->f);
}

void cta_json_obj(cta_json *j) { open(j, '{'); }
void cta_json_end_obj(cta_json *j) { close(j, '}'); }
void cta_json_arr(cta_json *j) { open(j, '['); }
void cta_json_end_arr(cta_json *j) { close(j, ']'); }

void cta_json_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            putc_unlocked('\\', f);
            putc_unlocked((int)c, f);
            p++;
        } else if (c < 0x20 || c == 0x7F) {
            fprintf(f, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            putc_unlocked((int)c, f); /* names are written for millions of timeline events */
            p++;
        } else {
            size_t n = cta_utf8_len(p);
            if (n == 0) {
                fputs_unlocked("\\ufffd", f);
                p++;
            } else {
                fwrite_unlocked(p, 1, n, f);
                p += n;
            }
        }
    }
}

void cta_json_key(cta_json *j, const char *k)
{
    pre_value(j);
    putc_unlocked('"', j->f);
    cta_json_escape(j->f, k);
    fputs_unlocked(j->pretty ? "\": " : "\":", j->f);
    j->after_key = 1;
}

void cta_json_str(cta_json *j, const char *s)
{
    pre_value(j);
    putc_unlocked('"', j->f);
    cta_json_escape(j->f, s);
    putc_unlocked('"', j->f);
}

/* Integers by hand: the JSON holds millions of them (series, timeline events); digit by digit
 * into the stream's buffer, a tenth faster than a call of fwrite each (summary --json of 64 ranks) */
static void put_u64(FILE *f, uint64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    while (p < buf + sizeof buf)
        putc_unlocked(*p++, f);
}

void cta_json_u64(cta_json *j, uint64_t v)
{
    pre_value(j);
    put_u64(j->f, v);
}

void cta_json_i64(cta_json *j, int64_t v)
{
    pre_value(j);
    if (v < 0)
        putc_unlocked('-', j->f);
    put_u64(j->f, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

void cta_json_num(cta_json *j, double v)
{
    pre_value(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(j->f, "%.0f", v);
    else
        fprintf(j->f, "%.6g", v);
}

void cta_json_bool(cta_json *j, int v)
{
    pre_value(j);
    fputs(v ? "true" : "false", j->f);
}

void cta_json_null(cta_json *j)
{
    pre_value(j);
    fputs("null", j->f);
}

/* ---- text ---- */
/* s[0..n) into buf as cta_text_safe does, without the marker's care; its length, *cut set when
 * it was cut ("..." then ends it). */
static size_t cta_text_copy(char *buf, size_t bufsz, const char *s, size_t n, size_t max, int *cut)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    size_t o = 0, chars = 0, at = 0; /* at: byte offset after max-3 characters */
    while (p < end && o + 4 + 4 < bufsz) {
        size_t k = *p < 0x20 || *p == 0x7F ? 0 : cta_utf8_len(p);
        if (k == 0) {
            buf[o++] = '?';
            p++;
        } else {
            memcpy(buf + o, p, k);
            o += k;
            p += k;
        }
        if (++chars == max - 3)
            at = o;
    }
    *cut = (max && chars > max) || p < end;
    if (*cut) {
        o = max && chars > max ? at : o;
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = 0;
    return o;
}

const char *cta_text_safe(char *buf, size_t bufsz, const char *s, size_t max)
{
    assert(bufsz >= 8);
    s = s ? s : "";
    /* A text the trace holds cut (FORMAT.md 4.1) shows its marker, its length, in any cell: what
     * is shown of it ends with the marker, whose "..." then also stands for the cell's cut. */
    uint64_t full;
    size_t len = strlen(s), end = ct_string_cut_at(s, len, &full), mark = len - end;
    if (!mark || bufsz < mark + 8 || (max && max < mark + 4))
        mark = 0, end = len;
    int cut;
    size_t o = cta_text_copy(buf, bufsz - mark, s, end, max ? max - mark : 0, &cut);
    if (mark) {
        size_t from = cut ? 3 : 0; /* the "..." of the cell's cut is the marker's */
        memcpy(buf + o, s + end + from, mark - from + 1);
    }
    return buf;
}

const char *cta_fmt_ns(char buf[32], double ns)
{
    if (ns < 1e3)
        snprintf(buf, 32, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, 32, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, 32, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, 32, "%.3f s", ns / 1e9);
    return buf;
}

const char *cta_fmt_bytes(char buf[32], double b)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4)
        b /= 1024, i++;
    if (i == 0)
        snprintf(buf, 32, "%.0f B", b);
    else
        snprintf(buf, 32, "%.2f %s", b, u[i]);
    return buf;
}

const char *cta_fmt_pct(char buf[32], double pct)
{
    snprintf(buf, 32, "%.1f%%", pct);
    return buf;
}

void cta_text_cut(FILE *f, size_t rows, size_t n)
{
    if (rows < n)
        fprintf(f, "  ... %zu more (use --top 0 for all)\n", n - rows);
}

struct cta_table {
    int ncols;
    char **cells; /* rows * ncols, row 0 the headers */
    size_t rows, cap;
};

cta_table *cta_table_new(int ncols, const char *const *headers)
{
    cta_table *t = cta_xmalloc(sizeof *t, "a table");
    t->ncols = ncols;
    cta_grow(&t->cells, &t->cap, (size_t)ncols, sizeof *t->cells);
    for (int i = 0; i < ncols; i++)
        t->cells[i] = strdup(headers[i]);
    t->rows = 1;
    return t;
}

void cta_table_row_v(cta_table *t, const char *const *cells)
{
    cta_grow(&t->cells, &t->cap, (t->rows + 1) * (size_t)t->ncols, sizeof *t->cells);
    for (int i = 0; i < t->ncols; i++)
        t->cells[t->rows * (size_t)t->ncols + (size_t)i] = strdup(cells[i] ? cells[i] : "");
    t->rows++;
}

void cta_table_row(cta_table *t, ...)
{
    const char *cells[32];
    va_list ap;
    va_start(ap, t);
    for (int i = 0; i < t->ncols; i++)
        cells[i] = va_arg(ap, const char *);
    va_end(ap);
    cta_table_row_v(t, cells);
}

/* Display width: UTF-8 characters (names are sanitised before they reach a table). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

void cta_table_print(cta_table *t, FILE *f, const char *indent)
{
    size_t w[32] = {0};
    assert(t->ncols <= 32);
    for (size_t r = 0; r < t->rows; r++)
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
            if (r == 0 && s[0] == '>')
                s++;
            size_t x = width(s);
            if (x > w[c])
                w[c] = x;
        }
    for (size_t r = 0; r < t->rows; r++) {
        fputs(indent, f);
        for (int c = 0; c < t->ncols; c++) {
            const char *h = t->cells[(size_t)c];
            int right = h[0] == '>';
            const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
            if (r == 0 && right)
                s++;
            size_t pad = w[c] - width(s);
            if (right)
                fprintf(f, "%*s%s", (int)pad, "", s);
            else if (c + 1 < t->ncols)
                fprintf(f, "%s%*s", s, (int)pad, "");
            else
                fputs(s, f);
            if (c + 1 < t->ncols)
                fputs("  ", f);
        }
        fputc('\n', f);
    }
}

void cta_table_free(cta_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->rows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}
