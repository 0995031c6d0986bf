#include "fmt.h"
#include "ct_records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FORMAT.md's record tables and the field lists the encoder and decoder are built from
 * (ct_records.h) say the same: per record type the same fields, in the same order, with the same
 * names, wire types and units. FORMAT.md writes a field as `name:type` (no type: uv) with an
 * optional "(description)"; a unit is the first of ns, bytes, kHz, bits, lanes the description
 * names as a word, else the one the name ends with (user_ns, l2_bytes). */

typedef struct {
    const char *name, *kind, *unit;
} ft_field;

typedef struct {
    const char *name;
    uint32_t type;
    const ft_field *fields;
    size_t n;
} ft_record;

#define FT_FIELD(name, kind, member, unit, dump, style, at) {#name, #kind, unit},
#define FT_LIST(TYPE, member, FIELDS) static const ft_field ft_##member[] = {FIELDS(FT_FIELD)};
CT_RECORDS(FT_LIST)
#define FT_RECORD(TYPE, member, FIELDS)                                                     \
    {#TYPE, CT_REC_##TYPE, ft_##member, sizeof ft_##member / sizeof ft_##member[0]},
static const ft_record ft_records[] = {CT_RECORDS(FT_RECORD)};

/* The variable-length records, written out by hand in the encoder and decoder. */
static const char *const ft_by_hand[] = {"STRING", "STACK"};

/* How FORMAT.md writes a kind's wire type. */
static const char *ft_wire_type(const char *kind)
{
    if (!strcmp(kind, "u32"))
        return "u32";
    if (!strcmp(kind, "sv32") || !strcmp(kind, "dcorr"))
        return "sv";
    if (!strcmp(kind, "uuid16"))
        return "16 raw bytes";
    return "uv"; /* uv, dur, since, parent */
}

static int ft_word_at(const char *s, const char *start, const char *w)
{
    size_t n = strlen(w);
    int before = s == start || !(s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') ||
                                 (s[-1] >= 'A' && s[-1] <= 'Z'));
    char a = s[n];
    return before && !strncmp(s, w, n) &&
           !(a == '_' || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z'));
}

static const char *ft_unit(const char *name, const char *desc)
{
    static const char *const units[] = {"ns", "bytes", "kHz", "bits", "lanes"};
    for (const char *s = desc; *s; s++)
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
            if (ft_word_at(s, desc, units[u]))
                return units[u];
    static const char *const suffix[][2] = {
        {"_ns", "ns"}, {"bytes", "bytes"}, {"_khz", "kHz"}, {"_bits", "bits"}};
    size_t nl = strlen(name);
    for (size_t u = 0; u < sizeof suffix / sizeof suffix[0]; u++) {
        size_t sl = strlen(suffix[u][0]);
        if (nl >= sl && !strcmp(name + nl - sl, suffix[u][0]))
            return suffix[u][1];
    }
    return "";
}

/* One field of a table cell: "`name:type` (description)". */
typedef struct {
    char name[64], type[32], unit[16];
} ft_doc;

static int ft_parse_field(const char *s, size_t len, ft_doc *d)
{
    char buf[2048];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *a = strchr(buf, '`'), *b = a ? strchr(a + 1, '`') : NULL;
    if (!a || !b || b - a - 1 >= (ptrdiff_t)sizeof d->name)
        return -1;
    *b = 0;
    char *colon = strchr(a + 1, ':');
    if (colon)
        *colon = 0;
    snprintf(d->name, sizeof d->name, "%s", a + 1);
    snprintf(d->type, sizeof d->type, "%s", colon ? colon + 1 : "uv");
    const char *desc = strchr(b + 1, '(');
    desc = desc ? desc + 1 : "";
    if (!strncmp(desc, "16 raw bytes", 12))
        snprintf(d->type, sizeof d->type, "16 raw bytes");
    snprintf(d->unit, sizeof d->unit, "%s", ft_unit(d->name, desc));
    return 0;
}

/* Splits a "fields after dts" cell at the commas outside parentheses. */
static size_t ft_parse_cell(const char *cell, const char *end, ft_doc *out, size_t max)
{
    size_t n = 0;
    int depth = 0;
    const char *start = cell;
    for (const char *p = cell; p <= end && n < max; p++) {
        if (p < end && *p == '(')
            depth++;
        else if (p < end && *p == ')')
            depth--;
        else if (p == end || (*p == ',' && depth == 0)) {
            if (ft_parse_field(start, (size_t)(p - start), &out[n]) == 0)
                n++;
            start = p + 1;
        }
    }
    return n;
}

static int ft_check(const char *doc, const char *path)
{
    int bad = 0, rows = 0;
    for (const char *line = doc; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        unsigned type;
        char name[32];
        int off = 0;
        if (sscanf(line, "| %u | %31[A-Z_] | %n", &type, name, &off) != 2 || !off)
            continue;
        const char *cell = line + off, *eol = strchr(cell, '\n');
        eol = eol ? eol : cell + strlen(cell);
        const char *end = eol;
        while (end > cell && (end[-1] == ' ' || end[-1] == '|'))
            end--;
        rows++;
        const ft_record *rec = NULL;
        for (size_t i = 0; i < sizeof ft_records / sizeof ft_records[0]; i++)
            if (!strcmp(ft_records[i].name, name))
                rec = &ft_records[i];
        int by_hand = 0;
        for (size_t i = 0; i < sizeof ft_by_hand / sizeof ft_by_hand[0]; i++)
            by_hand |= !strcmp(ft_by_hand[i], name);
        if (by_hand)
            continue;
        if (!rec) {
            fprintf(stderr, "%s: record %s (type %u) is not in trace-format/ct_records.h\n",
                    path, name, type);
            bad = 1;
            continue;
        }
        if (rec->type != type) {
            fprintf(stderr, "%s: %s: type %u, ct_records.h's CT_REC_%s is %u\n", path, name,
                    type, name, rec->type);
            bad = 1;
        }
        ft_doc f[64];
        size_t n = ft_parse_cell(cell, end, f, 64);
        for (size_t i = 0; i < n || i < rec->n; i++) {
            const ft_field *t = i < rec->n ? &rec->fields[i] : NULL;
            if (!t || i >= n) {
                fprintf(stderr, "%s: %s field %zu: FORMAT.md has %s, ct_records.h has %s\n", path,
                        name, i + 1, i < n ? f[i].name : "nothing", t ? t->name : "nothing");
                bad = 1;
                continue;
            }
            if (strcmp(f[i].name, t->name) || strcmp(f[i].type, ft_wire_type(t->kind)) ||
                strcmp(f[i].unit, t->unit)) {
                fprintf(stderr, "%s: %s field %zu: FORMAT.md has %s:%s in %s, ct_records.h has "
                        "%s:%s (%s) in %s\n", path, name, i + 1, f[i].name, f[i].type,
                        *f[i].unit ? f[i].unit : "no unit", t->name, ft_wire_type(t->kind),
                        t->kind, *t->unit ? t->unit : "no unit");
                bad = 1;
            }
        }
    }
    size_t want = sizeof ft_records / sizeof ft_records[0] +
                  sizeof ft_by_hand / sizeof ft_by_hand[0];
    if ((size_t)rows != want) {
        fprintf(stderr, "%s: %d record rows, expected %zu (ct_records.h's and STRING, STACK)\n",
                path, rows, want);
        bad = 1;
    }
    return bad;
}

TEST_IMPL(format_tables_match_the_record_lists)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/trace-format/FORMAT.md", CT_SRCDIR);
    size_t len;
    char *doc = ctt_read_file(path, &len);
    ASSERT(doc != NULL);
    int bad = ft_check(doc, path);
    free(doc);
    ASSERT_INT(bad, ==, 0);
    return 0;
}
