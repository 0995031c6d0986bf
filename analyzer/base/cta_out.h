/* Output helpers shared by the summary's text and JSON forms and the timeline: a JSON writer
 * that always produces valid JSON (strings escaped, invalid UTF-8 replaced by U+FFFD, non-finite
 * numbers written as null), text escaping for names shown in tables, human units, and aligned
 * text tables. */
#ifndef CTA_OUT_H
#define CTA_OUT_H

#include <stdint.h>
#include <stdio.h>

/* ---- JSON ---- */
typedef struct {
    FILE *f;
    int depth;
    int first[64]; /* per nesting level: no element written yet */
    int after_key;
    int pretty;
} cta_json;

void cta_json_init(cta_json *j, FILE *f, int pretty);
void cta_json_obj(cta_json *j);  /* { */
void cta_json_end_obj(cta_json *j);
void cta_json_arr(cta_json *j);  /* [ */
void cta_json_end_arr(cta_json *j);
void cta_json_key(cta_json *j, const char *k);
void cta_json_str(cta_json *j, const char *s);
void cta_json_u64(cta_json *j, uint64_t v);
void cta_json_i64(cta_json *j, int64_t v);
void cta_json_num(cta_json *j, double v);
void cta_json_bool(cta_json *j, int v);
void cta_json_null(cta_json *j);
/* Writes s as a JSON string literal body (no quotes) to f. */
void cta_json_escape(FILE *f, const char *s);
/* Length of the valid UTF-8 sequence at s, or 0 if it is invalid. */
size_t cta_utf8_len(const unsigned char *s);

/* fputs and decimal fprintf for output written millions of times (timeline events): a character
 * at a time into the stream's buffer costs a fraction of a stdio call. The analyzer writes from
 * one thread. */
static inline void cta_put_str(FILE *f, const char *s)
{
    while (*s)
        putc_unlocked(*s++, f);
}

static inline void cta_put_dec(FILE *f, uint64_t v)
{
    char b[20], *e = b + sizeof b, *p = e;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    while (p < e)
        putc_unlocked(*p++, f);
}

/* key + value shorthands */
#define CTA_JK_STR(j, k, v) (cta_json_key(j, k), cta_json_str(j, v))
#define CTA_JK_U64(j, k, v) (cta_json_key(j, k), cta_json_u64(j, v))
#define CTA_JK_I64(j, k, v) (cta_json_key(j, k), cta_json_i64(j, v))
#define CTA_JK_NUM(j, k, v) (cta_json_key(j, k), cta_json_num(j, v))
/* key: v, or null when it is not known (a counter the trace does not give) */
#define CTA_JK_U64_IF(j, k, known, v) (cta_json_key(j, k), (known) ? cta_json_u64(j, v) : cta_json_null(j))
#define CTA_JK_NUM_IF(j, k, known, v) (cta_json_key(j, k), (known) ? cta_json_num(j, v) : cta_json_null(j))

/* ---- text ---- */
/* Copies s into buf for a text table: control characters and invalid UTF-8 become '?', and a
 * name longer than max display characters is cut with "..." (max 0: no limit); a name the
 * trace holds cut keeps its marker (ct_string_cut) at the end. */
const char *cta_text_safe(char *buf, size_t bufsz, const char *s, size_t max);
/* "1.23 ms", "850 ns", "12.0 s" */
const char *cta_fmt_ns(char buf[32], double ns);
/* "1.50 GiB", "512 B" */
const char *cta_fmt_bytes(char buf[32], double bytes);
/* "12.3" with a % sign */
const char *cta_fmt_pct(char buf[32], double pct);
/* The line under a text table cut at `rows` (--top) of its n rows: how many more (none if
 * rows >= n). */
void cta_text_cut(FILE *f, size_t rows, size_t n);

/* Aligned table: add rows of cells (strings copied), then print. Columns whose header starts
 * with '>' are right-aligned (the '>' is not printed). */
typedef struct cta_table cta_table;
cta_table *cta_table_new(int ncols, const char *const *headers);
void cta_table_row(cta_table *t, ...); /* exactly ncols const char * cells */
void cta_table_row_v(cta_table *t, const char *const *cells); /* the same from an array */
void cta_table_print(cta_table *t, FILE *f, const char *indent);
void cta_table_free(cta_table *t);

#endif
