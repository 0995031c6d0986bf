/* A pull tokenizer over the file's text (cta_ksrc.h: through its gzip layers), one block at a
 * time, and a parser that knows only the parts of Kineto's document cutrace uses: the rest is
 * checked for validity and skipped without being stored. */
#define _GNU_SOURCE /* memmem */
#include "cta_kineto.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_ksrc.h"

typedef struct {
    cta_ksrc *src;
    const char *path;
    unsigned char buf[1 << 16];
    size_t pos, len;
    uint64_t off; /* decompressed bytes before buf */
    int eof;
    char *err;
    size_t errlen;
    int failed;
    /* the current event's strings, one after another; reset per event */
    char *ar;
    size_t arlen, arcap;
} kr;

static void failv(kr *r, uint64_t at, const char *fmt, va_list ap)
{
    if (r->failed)
        return;
    r->failed = 1;
    int n = snprintf(r->err, r->errlen, "%s: byte %llu: ", r->path, (unsigned long long)at);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
}

/* The error is at the next unread byte. */
static void fail(kr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(kr *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    failv(r, r->off + r->pos, fmt, ap);
    va_end(ap);
}

static void fail_at(kr *r, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_at(kr *r, uint64_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    failv(r, at, fmt, ap);
    va_end(ap);
}

/* Next byte without consuming it, -1 at the end of the file or after an error. */
static int peek(kr *r)
{
    if (r->failed)
        return -1;
    if (r->pos < r->len)
        return r->buf[r->pos];
    if (r->eof)
        return -1;
    r->off += r->len;
    r->pos = r->len = 0;
    long n = cta_ksrc_read(r->src, r->buf, sizeof r->buf);
    if (n < 0)
        fail(r, "%s", cta_ksrc_error(r->src));
    if (n <= 0) {
        r->eof = 1;
        return -1;
    }
    r->len = (size_t)n;
    return r->buf[0];
}

static int next(kr *r)
{
    int c = peek(r);
    if (c >= 0)
        r->pos++;
    return c;
}

/* Steps back over c, just read by next, so that an error names its offset. */
static void unread(kr *r, int c)
{
    if (c >= 0)
        r->pos--;
}

static int peek_token(kr *r)
{
    int c;
    while ((c = peek(r)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        r->pos++;
    return c;
}

/* "found X" for an error message. */
static const char *found(int c, char b[16])
{
    if (c < 0)
        return "the end of the file";
    if (c >= 0x20 && c < 0x7f)
        snprintf(b, 16, "'%c'", c);
    else
        snprintf(b, 16, "byte 0x%02x", c);
    return b;
}

static int expect(kr *r, int want, const char *what)
{
    int c = peek_token(r);
    if (c == want) {
        r->pos++;
        return 0;
    }
    char b[16];
    fail(r, "expected %s, found %s", what, found(c, b));
    return -1;
}

static int put(kr *r, char c)
{
    if (r->arlen == r->arcap) {
        if (r->arcap >= CTA_KINETO_MAX_EVENT) {
            fail(r, "expected an event shorter than %u bytes of strings, found a longer one",
                 CTA_KINETO_MAX_EVENT);
            return -1;
        }
        size_t cap = r->arcap ? r->arcap * 2 : 4096;
        char *p = realloc(r->ar, cap);
        if (!p) {
            fail(r, "out of memory");
            return -1;
        }
        r->ar = p;
        r->arcap = cap;
    }
    r->ar[r->arlen++] = c;
    return 0;
}

static int put_utf8(kr *r, uint32_t cp)
{
    char b[4];
    int n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    for (int i = 0; i < n; i++)
        if (put(r, b[i]) != 0)
            return -1;
    return 0;
}

static int hex4(kr *r, uint32_t *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = next(r);
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) {
            char b[16];
            unread(r, c);
            fail(r, "expected a hexadecimal digit of a \\u escape, found %s", found(c, b));
            return -1;
        }
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* A string (after skipping blanks): kept (NUL-terminated, in the event's strings; its offset in
 * *at) when at is not NULL, else only checked. */
static int string(kr *r, size_t *at)
{
    if (expect(r, '"', "a string") != 0)
        return -1;
    if (at)
        *at = r->arlen;
    for (;;) {
        int c = next(r);
        char b[16];
        if (c < 0x20) {
            unread(r, c);
            fail(r, "expected the rest of a string, found %s", found(c, b));
            return -1;
        }
        if (c == '"')
            break;
        if (c == '\\') {
            uint32_t cp;
            c = next(r);
            switch (c) {
            case '"': case '\\': case '/': cp = (uint32_t)c; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                if (hex4(r, &cp) != 0)
                    return -1;
                if (cp >= 0xD800 && cp < 0xDC00 && peek(r) == '\\') {
                    uint32_t lo;
                    r->pos++;
                    if (next(r) != 'u' || hex4(r, &lo) != 0) {
                        fail(r, "expected the low half of a \\u surrogate pair");
                        return -1;
                    }
                    cp = lo >= 0xDC00 && lo < 0xE000 ? 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                                                     : 0xFFFD;
                } else if (cp >= 0xD800 && cp < 0xE000) {
                    cp = 0xFFFD;
                }
                break;
            default:
                unread(r, c);
                fail(r, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u), found %s",
                     found(c, b));
                return -1;
            }
            if (at && put_utf8(r, cp) != 0)
                return -1;
        } else if (at && put(r, (char)c) != 0) {
            return -1;
        }
    }
    return at ? put(r, '\0') : 0;
}

static int number(kr *r, double *v)
{
    char t[72];
    size_t n = 0;
    int c;
    peek_token(r);
    uint64_t at = r->off + r->pos;
    while ((c = peek(r)) >= 0 && (c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' ||
                                  (c >= '0' && c <= '9'))) {
        if (n + 1 >= sizeof t) {
            fail_at(r, at, "expected a number of at most %zu characters", sizeof t - 1);
            return -1;
        }
        t[n++] = (char)c;
        r->pos++;
    }
    t[n] = '\0';
    /* RFC 8259's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? */
    const char *p = t;
    if (*p == '-')
        p++;
    int ok = *p >= '0' && *p <= '9';
    if (ok && *p == '0')
        p++;
    else
        while (*p >= '0' && *p <= '9')
            p++;
    if (ok && *p == '.') {
        p++;
        ok = *p >= '0' && *p <= '9';
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (ok && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        ok = *p >= '0' && *p <= '9';
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (!ok || *p) {
        fail_at(r, at, "expected a number, found \"%s\"", t);
        return -1;
    }
    *v = strtod(t, NULL);
    return 0;
}

static int literal(kr *r, const char *w)
{
    for (const char *p = w; *p; p++) {
        int c = next(r);
        if (c != *p) {
            char b[16];
            unread(r, c);
            fail(r, "expected '%s', found %s", w, found(c, b));
            return -1;
        }
    }
    return 0;
}

static int skip_value(kr *r, int depth);

/* Iterates over an object's members: calls member(r, key, ctx) with the value next; the key is
 * kept in the event's strings only while member runs. */
typedef int (*member_fn)(kr *r, const char *key, void *ctx, int depth);

static int object(kr *r, member_fn member, void *ctx, int depth)
{
    if (depth > CTA_KINETO_MAX_DEPTH) {
        fail(r, "expected at most %d nested arrays and objects, found more", CTA_KINETO_MAX_DEPTH);
        return -1;
    }
    if (expect(r, '{', "an object") != 0)
        return -1;
    if (peek_token(r) == '}') {
        r->pos++;
        return 0;
    }
    for (;;) {
        size_t mark = r->arlen, at;
        if (string(r, &at) != 0 || expect(r, ':', "':' after a key") != 0)
            return -1;
        char key[32];
        snprintf(key, sizeof key, "%s", r->ar + at);
        r->arlen = mark;
        if ((member ? member(r, key, ctx, depth + 1) : skip_value(r, depth + 1)) != 0)
            return -1;
        int c = peek_token(r);
        r->pos += c >= 0;
        if (c == '}')
            return 0;
        if (c != ',') {
            char b[16];
            fail(r, "expected ',' or '}' in an object, found %s", found(c, b));
            return -1;
        }
    }
}

/* Iterates over an array's elements: calls elem(r, ctx) with the element next. The document's
 * own array (depth 1: Chrome's array form) may end without its ']' (the Trace Event Format says
 * so: a writer that stops leaves it out), after an element or its ','. */
typedef int (*elem_fn)(kr *r, void *ctx, int depth);

static int array(kr *r, elem_fn elem, void *ctx, int depth)
{
    if (depth > CTA_KINETO_MAX_DEPTH) {
        fail(r, "expected at most %d nested arrays and objects, found more", CTA_KINETO_MAX_DEPTH);
        return -1;
    }
    if (expect(r, '[', "an array") != 0)
        return -1;
    if (peek_token(r) == ']') {
        r->pos++;
        return 0;
    }
    for (;;) {
        if (depth == 1 && peek_token(r) < 0 && !r->failed)
            return 0;
        if ((elem ? elem(r, ctx, depth + 1) : skip_value(r, depth + 1)) != 0)
            return -1;
        int c = peek_token(r);
        r->pos += c >= 0;
        if (c == ']' || (depth == 1 && c < 0 && !r->failed))
            return 0;
        if (c != ',') {
            char b[16];
            fail(r, "expected ',' or ']' in an array, found %s", found(c, b));
            return -1;
        }
    }
}

/* What a JSON value starting with c is, in words; NULL when c starts none. */
static const char *value_kind(int c)
{
    switch (c) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't': return "true";
    case 'f': return "false";
    case 'n': return "null";
    default: return c == '-' || (c >= '0' && c <= '9') ? "a number" : NULL;
    }
}

static int skip_value(kr *r, int depth)
{
    int c = peek_token(r);
    double d;
    switch (c) {
    case '{': return object(r, NULL, NULL, depth);
    case '[': return array(r, NULL, NULL, depth);
    case '"': return string(r, NULL);
    case 't': return literal(r, "true");
    case 'f': return literal(r, "false");
    case 'n': return literal(r, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return number(r, &d);
        char b[16];
        fail(r, "expected a value, found %s", found(c, b));
        return -1;
    }
}

/* A value that should be a number: a number is stored, anything else skipped (absent). A
 * number beyond 2^53 in magnitude counts as absent too, so that every field converts to an
 * integer safely (Kineto's microsecond clock reads about 2^51). */
static int opt_number(kr *r, cta_knum *n)
{
    int c = peek_token(r);
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (number(r, &n->v) != 0)
            return -1;
        n->has = fabs(n->v) <= 9007199254740992.0;
        n->why = n->has ? CTA_KNUM_ABSENT : CTA_KNUM_HUGE;
        return 0;
    }
    n->has = 0;
    n->why = CTA_KNUM_NOT_NUMBER;
    return skip_value(r, 0);
}

/* A value that should be a string: kept at *at (SIZE_MAX if it is not a string). */
static int opt_string(kr *r, size_t *at)
{
    if (peek_token(r) == '"')
        return string(r, at);
    *at = SIZE_MAX;
    return skip_value(r, 0);
}

typedef struct {
    cta_kevent e;
    size_t ph, cat, name, pid_str, tid_str, arg_name;
    int dim_i;
    int64_t *dim;
} evparse;

static int dim_elem(kr *r, void *ctx, int depth)
{
    (void)depth;
    evparse *p = ctx;
    cta_knum n;
    if (opt_number(r, &n) != 0)
        return -1;
    if (p->dim_i < 3 && n.has)
        p->dim[p->dim_i] = (int64_t)n.v;
    p->dim_i++;
    return 0;
}

static int dims(kr *r, evparse *p, int64_t *dim, int depth)
{
    if (peek_token(r) != '[')
        return skip_value(r, depth);
    p->dim = dim;
    p->dim_i = 0;
    return array(r, dim_elem, p, depth);
}

static int arg_member(kr *r, const char *k, void *ctx, int depth)
{
    evparse *p = ctx;
    cta_kevent *e = &p->e;
    if (!strcmp(k, "device"))
        return opt_number(r, &e->device);
    if (!strcmp(k, "stream"))
        return opt_number(r, &e->stream);
    if (!strcmp(k, "correlation"))
        return opt_number(r, &e->correlation);
    if (!strcmp(k, "External id"))
        return opt_number(r, &e->external_id);
    if (!strcmp(k, "bytes"))
        return opt_number(r, &e->bytes);
    if (!strcmp(k, "grid"))
        return dims(r, p, e->grid, depth);
    if (!strcmp(k, "block"))
        return dims(r, p, e->block, depth);
    if (!strcmp(k, "shared memory"))
        return opt_number(r, &e->shared_memory);
    if (!strcmp(k, "Device Type"))
        return opt_number(r, &e->mem_dev_type);
    if (!strcmp(k, "Device Id"))
        return opt_number(r, &e->mem_dev_id);
    if (!strcmp(k, "Addr"))
        return opt_number(r, &e->mem_addr);
    if (!strcmp(k, "Bytes"))
        return opt_number(r, &e->mem_bytes);
    if (!strcmp(k, "Total Allocated"))
        return opt_number(r, &e->mem_total);
    if (!strcmp(k, "name"))
        return opt_string(r, &p->arg_name);
    return skip_value(r, depth);
}

static int event_member(kr *r, const char *k, void *ctx, int depth)
{
    evparse *p = ctx;
    cta_kevent *e = &p->e;
    if (!strcmp(k, "ph"))
        return opt_string(r, &p->ph);
    if (!strcmp(k, "cat"))
        return opt_string(r, &p->cat);
    if (!strcmp(k, "name"))
        return opt_string(r, &p->name);
    if (!strcmp(k, "ts"))
        return opt_number(r, &e->ts);
    if (!strcmp(k, "dur"))
        return opt_number(r, &e->dur);
    if (!strcmp(k, "pid") || !strcmp(k, "tid")) {
        int pid = k[0] == 'p';
        if (peek_token(r) == '"') {
            (pid ? &e->pid : &e->tid)->why = CTA_KNUM_NOT_NUMBER;
            return string(r, pid ? &p->pid_str : &p->tid_str);
        }
        return opt_number(r, pid ? &e->pid : &e->tid);
    }
    if (!strcmp(k, "args") && peek_token(r) == '{')
        return object(r, arg_member, p, depth);
    return skip_value(r, depth);
}

typedef struct {
    cta_kevent_fn fn;
    void *ctx;
    cta_kmeta *meta;
    int stopped;
    int events;                   /* a traceEvents array (or the array form) was read */
    const char *events_not_array; /* what a traceEvents key held instead */
    uint64_t members;             /* other members of the top-level object */
} docparse;

static const char *str_at(kr *r, size_t at) { return at == SIZE_MAX ? "" : r->ar + at; }

static int event_elem(kr *r, void *ctx, int depth)
{
    docparse *d = ctx;
    evparse p;
    memset(&p, 0, sizeof p);
    p.ph = p.cat = p.name = p.pid_str = p.tid_str = p.arg_name = SIZE_MAX;
    r->arlen = 0;
    if (object(r, event_member, &p, depth) != 0)
        return -1;
    p.e.ph = str_at(r, p.ph);
    p.e.cat = str_at(r, p.cat);
    p.e.name = str_at(r, p.name);
    p.e.pid_str = str_at(r, p.pid_str);
    p.e.tid_str = str_at(r, p.tid_str);
    p.e.arg_name = str_at(r, p.arg_name);
    p.e.has_cat = p.cat != SIZE_MAX;
    p.e.has_name = p.name != SIZE_MAX;
    d->meta->events++;
    int rc = d->fn ? d->fn(d->ctx, &p.e) : 0;
    if (rc != 0) {
        d->stopped = rc;
        return -1;
    }
    return 0;
}

static int dist_member(kr *r, const char *k, void *ctx, int depth)
{
    cta_kmeta *m = ctx;
    if (!strcmp(k, "rank")) {
        cta_knum n;
        if (opt_number(r, &n) != 0)
            return -1;
        m->has_rank = n.has;
        m->rank = n.has ? (int64_t)n.v : 0;
        return 0;
    }
    return skip_value(r, depth);
}

static int device_member(kr *r, const char *k, void *ctx, int depth)
{
    cta_kdevice *d = ctx;
    static const struct {
        const char *key;
        size_t off;
    } nums[] = {
        {"id", offsetof(cta_kdevice, id)},
        {"numSms", offsetof(cta_kdevice, sms)},
        {"computeMajor", offsetof(cta_kdevice, cc_major)},
        {"computeMinor", offsetof(cta_kdevice, cc_minor)},
        {"warpSize", offsetof(cta_kdevice, warp_size)},
        {"regsPerMultiprocessor", offsetof(cta_kdevice, regs_per_sm)},
        {"sharedMemPerMultiprocessor", offsetof(cta_kdevice, smem_per_sm)},
        {"maxThreadsPerMultiprocessor", offsetof(cta_kdevice, threads_per_sm)},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (strcmp(k, nums[i].key))
            continue;
        cta_knum n;
        if (opt_number(r, &n) != 0)
            return -1;
        *(int64_t *)((char *)d + nums[i].off) = n.has && n.v >= 0 && n.v < 2147483648.0 ? (int64_t)n.v : 0;
        return 0;
    }
    if (!strcmp(k, "totalGlobalMem")) {
        cta_knum n;
        if (opt_number(r, &n) != 0)
            return -1;
        d->mem_bytes = n.has && n.v >= 0 ? (uint64_t)n.v : 0;
        return 0;
    }
    if (!strcmp(k, "name")) {
        size_t mark = r->arlen, at;
        if (opt_string(r, &at) != 0)
            return -1;
        snprintf(d->name, sizeof d->name, "%s", str_at(r, at));
        r->arlen = mark;
        return 0;
    }
    return skip_value(r, depth);
}

static int device_elem(kr *r, void *ctx, int depth)
{
    cta_kmeta *m = ctx;
    int i = m->ndevices++;
    if (i >= CTA_KINETO_MAX_DEVICES || peek_token(r) != '{')
        return skip_value(r, depth);
    return object(r, device_member, &m->devices[i], depth);
}

static int doc_member(kr *r, const char *k, void *ctx, int depth)
{
    docparse *d = ctx;
    int c = peek_token(r);
    if (!strcmp(k, "traceEvents") && c == '[') {
        d->events = 1;
        return array(r, event_elem, d, depth);
    }
    if (!strcmp(k, "traceEvents") && !d->events)
        d->events_not_array = value_kind(c);
    if (!strcmp(k, "distributedInfo") && c == '{')
        return object(r, dist_member, d->meta, depth);
    if (!strcmp(k, "deviceProperties") && c == '[')
        return array(r, device_elem, d->meta, depth);
    d->members++;
    return skip_value(r, depth);
}

/* A document that parsed but holds no traceEvents array: what it is, in the error. */
static void no_events(kr *r, const char *what)
{
    if (r->failed)
        return;
    r->failed = 1;
    snprintf(r->err, r->errlen,
             "%s: a JSON document with no trace events: expected an object with a \"traceEvents\" "
             "array or Chrome's array form [{...}, ...], found %s", r->path, what);
}

static int document(kr *r, docparse *d)
{
    int c = peek_token(r);
    if (c == '[') { /* Chrome's JSON array form: the events alone */
        d->events = 1;
        return array(r, event_elem, d, 1);
    }
    if (c == '{') {
        if (object(r, doc_member, d, 1) != 0)
            return -1;
        if (!d->events) {
            char what[64];
            if (d->events_not_array)
                snprintf(what, sizeof what, "\"traceEvents\" holding %s", d->events_not_array);
            else
                snprintf(what, sizeof what, "%s", d->members ? "an object without \"traceEvents\"" : "an empty object");
            no_events(r, what);
        }
        return 0;
    }
    const char *kind = value_kind(c);
    if (kind) {
        if (skip_value(r, 1) == 0)
            no_events(r, kind);
        return 0;
    }
    char b[16];
    if (r->len - r->pos >= 7 && !memcmp(r->buf + r->pos, "CUTRACE", 7))
        fail(r, "expected JSON (a PyTorch profiler trace), found a cutrace trace compressed with "
                "gzip: decompress it (gunzip) to read it");
    else
        fail(r, "expected a JSON document (a PyTorch profiler trace: '{' or '['%s), found %s",
             cta_ksrc_gzip(r->src) ? ", inside the gzip compression" : "", found(c, b));
    return -1;
}

static kr *kr_open(const char *path, char *err, size_t errlen)
{
    kr *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->path = path;
    r->err = err;
    r->errlen = errlen;
    if (!(r->src = cta_ksrc_open(path, err, errlen))) {
        free(r);
        return NULL;
    }
    return r;
}

static void kr_close(kr *r)
{
    cta_ksrc_close(r->src);
    free(r->ar);
    free(r);
}

/* Whether the buffered text at c (peeked) is the literal null, true or false, alone. */
static int literal_at(kr *r, int c)
{
    const char *lit = c == 'n' ? "null" : c == 't' ? "true" : c == 'f' ? "false" : NULL;
    size_t n = lit ? strlen(lit) : 0, have = r->len - r->pos;
    return lit && have >= n && !memcmp(r->buf + r->pos, lit, n) &&
           (have == n || !isalnum(r->buf[r->pos + n]));
}

int cta_kineto_sniff(const char *path)
{
    char err[512];
    kr *r = kr_open(path, err, sizeof err);
    if (!r)
        return -1;
    int c = peek_token(r), what = CTA_KFILE_OTHER;
    if (c == '[') {
        what = CTA_KFILE_TRACE;
    } else if (c == '{') {
        /* Kineto writes its few KiB of metadata (devices, ranks) before the events: the key must
         * show in the first 64 KiB, so that other JSON (cutrace's summary, say) is not taken for
         * a profile. '"' starts and ends a key, nowhere else: a match restarts only there. */
        static const char key[] = "\"traceEvents\"", mark[] = CTA_TIMELINE_MARK;
        size_t m = 0, t = 0;
        what = CTA_KFILE_JSON;
        while (r->off + r->pos < (64u << 10) && (c = next(r)) >= 0) {
            m = c == key[m] ? m + 1 : c == '"';
            t = t == sizeof mark - 1 ? t : c == mark[t] ? t + 1 : c == '"'; /* kept once seen */
            if (m == sizeof key - 1) {
                what = t == sizeof mark - 1 ? CTA_KFILE_TIMELINE : CTA_KFILE_TRACE;
                break;
            }
        }
    } else if (c == '"' || literal_at(r, c) || cta_ksrc_gzip(r->src) || r->failed) {
        /* other JSON, gzip or UTF-16 text: the read names what it is (a number is left out: a
         * text file may start with one) */
        what = CTA_KFILE_JSON;
    }
    kr_close(r);
    return what;
}

int cta_kineto_read(const char *path, cta_kevent_fn fn, void *ctx, cta_kmeta *meta, char *err,
                    size_t errlen)
{
    memset(meta, 0, sizeof *meta);
    if (cta_kineto_sniff(path) == CTA_KFILE_TIMELINE) {
        snprintf(err, errlen, "%s: a timeline written by `cutrace timeline`, not a trace: give cutrace "
                 "the .cutrace files (or their directory) it was made from", path);
        return -1;
    }
    kr *r = kr_open(path, err, errlen);
    if (!r)
        return -1;
    docparse d = {.fn = fn, .ctx = ctx, .meta = meta};
    if (!r->failed && document(r, &d) == 0 && peek_token(r) >= 0) {
        char b[16];
        fail(r, "expected the end of the file after the document, found %s", found(peek(r), b));
    }
    int rc = d.stopped ? d.stopped : r->failed ? -1 : 0;
    kr_close(r);
    return rc;
}
