/* Output helpers shared by the summary's text and JSON forms and the timeline: a JSON writer
 * that always produces valid JSON (strings escaped, invalid UTF-8 replaced by U+FFFD, non-finite
 * numbers written as null), text escaping for names shown in tables, human units, and aligned
 * text tables. */
#ifndef CT_OUT_H
#define CT_OUT_H

#include <stdint.h>
#include <stdio.h>

/* ---- JSON ---- */
typedef struct {
    FILE *f;
    int depth;
    int first[64]; /* per nesting level: no element written yet */
    int after_key;
    int pretty;
} ct_json;

void ct_json_init(ct_json *j, FILE *f, int pretty);
void ct_json_obj(ct_json *j);  /* { */
void ct_json_end_obj(ct_json *j);
void ct_json_arr(ct_json *j);  /* [ */
void ct_json_end_arr(ct_json *j);
void ct_json_key(ct_json *j, const char *k);
void ct_json_str(ct_json *j, const char *s);
void ct_json_u64(ct_json *j, uint64_t v);
void ct_json_i64(ct_json *j, int64_t v);
void ct_json_num(ct_json *j, double v);
void ct_json_bool(ct_json *j, int v);
void ct_json_null(ct_json *j);
/* Writes s as a JSON string literal body (no quotes) to f. */
void ct_json_escape(FILE *f, const char *s);

/* fputs and decimal fprintf for output written millions of times (timeline events): a character
 * at a time into the stream's buffer costs a fraction of a stdio call. The analyzer writes from
 * one thread. */
static inline void ct_put_str(FILE *f, const char *s)
{
    while (*s)
        putc_unlocked(*s++, f);
}

static inline void ct_put_dec(FILE *f, uint64_t v)
{
    char b[20], *e = b + sizeof b, *p = e;
    do
        *--p = (char)('0' + v % 10);
    while (v /= 10);
    while (p < e)
        putc_unlocked(*p++, f);
}

/* key + value shorthands */
#define CT_JK_STR(j, k, v) (ct_json_key(j, k), ct_json_str(j, v))
#define CT_JK_U64(j, k, v) (ct_json_key(j, k), ct_json_u64(j, v))
#define CT_JK_I64(j, k, v) (ct_json_key(j, k), ct_json_i64(j, v))
#define CT_JK_NUM(j, k, v) (ct_json_key(j, k), ct_json_num(j, v))

/* ---- text ---- */
/* Copies s into buf for a text table: control characters and invalid UTF-8 become '?', and a
 * name longer than max display characters is cut with "..." (max 0: no limit). */
const char *ct_text_safe(char *buf, size_t bufsz, const char *s, size_t max);
/* "1.23 ms", "850 ns", "12.0 s" */
const char *ct_fmt_ns(char buf[32], double ns);
/* "1.50 GiB", "512 B" */
const char *ct_fmt_bytes(char buf[32], double bytes);
/* "12.3" with a % sign */
const char *ct_fmt_pct(char buf[32], double pct);

/* Aligned table: add rows of cells (strings copied), then print. Columns whose header starts
 * with '>' are right-aligned (the '>' is not printed). */
typedef struct ct_table ct_table;
ct_table *ct_table_new(int ncols, const char *const *headers);
void ct_table_row(ct_table *t, ...); /* exactly ncols const char * cells */
void ct_table_row_v(ct_table *t, const char *const *cells); /* the same from an array */
void ct_table_print(ct_table *t, FILE *f, const char *indent);
void ct_table_free(ct_table *t);

#endif
