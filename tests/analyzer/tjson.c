#include "tjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    char *err;
    size_t errlen;
    int failed;
} ps;

static void fail(ps *s, const char *what)
{
    if (!s->failed)
        snprintf(s->err, s->errlen, "%s at \"%.20s\"", what, s->p);
    s->failed = 1;
}

static void ws(ps *s)
{
    while (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')
        s->p++;
}

static tj *node(tj_type t)
{
    tj *j = calloc(1, sizeof *j);
    if (!j)
        abort();
    j->type = t;
    return j;
}

static void add(tj *j, tj *v, char *key)
{
    j->v = realloc(j->v, (j->n + 1) * sizeof *j->v);
    if (j->type == TJ_OBJ)
        j->keys = realloc(j->keys, (j->n + 1) * sizeof *j->keys);
    if (!j->v || (j->type == TJ_OBJ && !j->keys))
        abort();
    j->v[j->n] = v;
    if (j->type == TJ_OBJ)
        j->keys[j->n] = key;
    j->n++;
}

static void put_utf8(char **o, unsigned cp)
{
    unsigned char *u = (unsigned char *)*o;
    if (cp < 0x80) {
        *u++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *u++ = (unsigned char)(0xC0 | (cp >> 6));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *u++ = (unsigned char)(0xE0 | (cp >> 12));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *u++ = (unsigned char)(0xF0 | (cp >> 18));
        *u++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *o = (char *)u;
}

static char *string(ps *s)
{
    if (*s->p != '"') {
        fail(s, "expected a string");
        return NULL;
    }
    s->p++;
    /* no longer than its text up to the closing quote (an escape decodes shorter): sized by
     * the rest of the document, 20,000 strings of a 2 MB timeline took gigabytes */
    size_t len = 0;
    while (s->p[len] && s->p[len] != '"')
        len += s->p[len] == '\\' && s->p[len + 1] ? 2 : 1;
    char *out = malloc(len + 1), *o = out;
    if (!out)
        abort();
    while (*s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c == 0 || c < 0x20) {
            fail(s, "unterminated string or raw control character");
            free(out);
            return NULL;
        }
        if (c == '\\') {
            s->p++;
            char e = *s->p++;
            const char *map = strchr("\"\\/bfnrt", e);
            if (e == 'u') {
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    char h = *s->p++;
                    int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                    if (v < 0) {
                        fail(s, "bad \\u escape");
                        free(out);
                        return NULL;
                    }
                    cp = cp * 16 + (unsigned)v;
                }
                put_utf8(&o, cp);
            } else if (map && e) {
                *o++ = "\"\\/\b\f\n\r\t"[map - "\"\\/bfnrt"];
            } else {
                fail(s, "bad escape");
                free(out);
                return NULL;
            }
            continue;
        }
        /* UTF-8 validity */
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4 : 0;
        for (size_t i = 1; i < n; i++)
            if (((unsigned char)s->p[i] & 0xC0) != 0x80)
                n = 0;
        if (n == 0) {
            fail(s, "invalid UTF-8 in a string");
            free(out);
            return NULL;
        }
        memcpy(o, s->p, n);
        o += n;
        s->p += n;
    }
    s->p++;
    *o = 0;
    return out;
}

static tj *value(ps *s, int depth)
{
    ws(s);
    if (depth > 200) {
        fail(s, "nesting too deep");
        return NULL;
    }
    tj *j = NULL;
    if (*s->p == '{' || *s->p == '[') {
        int obj = *s->p == '{';
        j = node(obj ? TJ_OBJ : TJ_ARR);
        s->p++;
        ws(s);
        if (*s->p == (obj ? '}' : ']')) {
            s->p++;
            return j;
        }
        for (;;) {
            char *key = NULL;
            ws(s);
            if (obj) {
                key = string(s);
                ws(s);
                if (!key || *s->p != ':') {
                    fail(s, "expected a key and ':'");
                    free(key);
                    tj_free(j);
                    return NULL;
                }
                s->p++;
            }
            tj *v = value(s, depth + 1);
            if (!v) {
                free(key);
                tj_free(j);
                return NULL;
            }
            add(j, v, key);
            ws(s);
            if (*s->p == ',') {
                s->p++;
                continue;
            }
            if (*s->p == (obj ? '}' : ']')) {
                s->p++;
                return j;
            }
            fail(s, "expected ',' or a closing bracket");
            tj_free(j);
            return NULL;
        }
    }
    if (*s->p == '"') {
        char *str = string(s);
        if (!str)
            return NULL;
        j = node(TJ_STR);
        j->str = str;
        return j;
    }
    if (!strncmp(s->p, "true", 4) || !strncmp(s->p, "false", 5)) {
        j = node(TJ_BOOL);
        j->num = *s->p == 't';
        s->p += *s->p == 't' ? 4 : 5;
        return j;
    }
    if (!strncmp(s->p, "null", 4)) {
        s->p += 4;
        return node(TJ_NULL);
    }
    const char *start = s->p;
    if (*s->p == '-')
        s->p++;
    if (!(*s->p >= '0' && *s->p <= '9')) {
        fail(s, "expected a value");
        return NULL;
    }
    if (*s->p == '0' && s->p[1] >= '0' && s->p[1] <= '9') {
        fail(s, "leading zero");
        return NULL;
    }
    char *end;
    double d = strtod(start, &end);
    s->p = end;
    j = node(TJ_NUM);
    j->num = d;
    return j;
}

tj *tj_parse(const char *text, char *err, size_t errlen)
{
    ps s = {.p = text, .err = err, .errlen = errlen};
    tj *j = value(&s, 0);
    if (j) {
        ws(&s);
        if (*s.p) {
            fail(&s, "trailing text after the value");
            tj_free(j);
            return NULL;
        }
    }
    return j;
}

void tj_free(tj *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++) {
        tj_free(j->v[i]);
        if (j->keys)
            free(j->keys[i]);
    }
    free(j->v);
    free(j->keys);
    free(j->str);
    free(j);
}

const tj *tj_get(const tj *o, const char *key)
{
    if (!o || o->type != TJ_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key))
            return o->v[i];
    return NULL;
}

const tj *tj_at(const tj *a, size_t i)
{
    return a && a->type == TJ_ARR && i < a->n ? a->v[i] : NULL;
}

const tj *tj_find(const tj *a, const char *key, const char *value)
{
    for (size_t i = 0; a && a->type == TJ_ARR && i < a->n; i++) {
        const tj *k = tj_get(a->v[i], key);
        if (k && k->type == TJ_STR && !strcmp(k->str, value))
            return a->v[i];
    }
    return NULL;
}

const tj *tj_path(const tj *j, const char *p)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *tok = strtok(buf, "."); tok && j; tok = strtok(NULL, ".")) {
        if (j->type == TJ_ARR && tok[0] >= '0' && tok[0] <= '9')
            j = tj_at(j, (size_t)atoi(tok));
        else
            j = tj_get(j, tok);
    }
    return j;
}

double tj_num(const tj *j, const char *p)
{
    const tj *v = tj_path(j, p);
    return v && (v->type == TJ_NUM || v->type == TJ_BOOL) ? v->num : NAN;
}

const char *tj_str(const tj *j, const char *p)
{
    const tj *v = tj_path(j, p);
    return v && v->type == TJ_STR ? v->str : NULL;
}

size_t tj_len(const tj *j, const char *p)
{
    const tj *v = tj_path(j, p);
    return v && (v->type == TJ_ARR || v->type == TJ_OBJ) ? v->n : 0;
}
