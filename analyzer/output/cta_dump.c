/* `cutrace dump`'s lines (cta_dump.h): a record's fields expanded from the format's field
 * lists (ct_records.h), so that a new field or record type prints with no edit here. */
#include "cta_dump.h"
#include "cta_cli.h"
#include "ct_records.h"

#include <inttypes.h>
#include <string.h>

/* Prints s (len bytes) quoted, with C escapes for quotes, backslashes and non-printables. */
static void cta_dump_quoted(FILE *o, const char *s, size_t len)
{
    fputc('"', o);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(o, "\\x%02x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

typedef struct {
    FILE *o;
    const ct_reader *r;
    uint32_t file;
} cta_dumper;

static void cta_dump_str(cta_dumper *d, const char *key, uint32_t id)
{
    const char *s = id ? ct_reader_string(d->r, d->file, id) : NULL;
    fprintf(d->o, " %s=", key);
    if (s)
        cta_dump_quoted(d->o, s, strlen(s));
    else if (id)
        fprintf(d->o, "<string %u>", id);
    else
        fputs("-", d->o);
    if (id)
        fprintf(d->o, "#%u", id);
}

static void cta_dump_header(cta_dumper *d)
{
    const ct_header *h = ct_reader_header(d->r, d->file);
    FILE *o = d->o;
    fprintf(o, "header file=%u path=", d->file);
    const char *path = ct_reader_path(d->r, d->file);
    cta_dump_quoted(o, path, strlen(path));
    fprintf(o, " format=%u.%u\n", h->major, h->minor);
    fprintf(o, "header host=");
    cta_dump_quoted(o, h->hostname, strlen(h->hostname));
    fprintf(o, " pid=%u ppid=%u\n", h->pid, h->ppid);
    fprintf(o, "header cmdline=");
    for (size_t i = 0; i < h->cmdline_len;) {
        size_t n = strnlen(h->cmdline + i, h->cmdline_len - i);
        if (i)
            fputc(' ', o);
        cta_dump_quoted(o, h->cmdline + i, n);
        i += n + 1;
    }
    fprintf(o, "\nheader exe=");
    cta_dump_quoted(o, h->exe, strlen(h->exe));
    fprintf(o, " boot_id=");
    cta_dump_quoted(o, h->boot_id, strlen(h->boot_id));
    fprintf(o, "\nheader clock realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64
               " uncertainty_ns=%" PRIu64 " offset_ns=%" PRId64 "\n",
            h->realtime_ns, h->monotonic_ns, h->clock_uncertainty_ns,
            ct_reader_offset(d->r, d->file));
    fprintf(o, "header tracer=");
    cta_dump_quoted(o, h->tracer_version, strlen(h->tracer_version));
    fprintf(o, " options=");
    cta_dump_quoted(o, h->tracer_options, strlen(h->tracer_options));
    fputc('\n', o);
    for (size_t i = 0; i < h->nenv; i++) {
        fprintf(o, "header env ");
        cta_dump_quoted(o, h->env[i], strlen(h->env[i]));
        fputc('\n', o);
    }
}

/* One field of *v by its dump style (trace-format/ct_records.h), as " key=value". */
#define CTA_DUMP_u(key, x) fprintf(o, " " #key "=%" PRIu64, (uint64_t)(x));
#define CTA_DUMP_d(key, x) fprintf(o, " " #key "=%d", (int)(x));
#define CTA_DUMP_x(key, x) fprintf(o, " " #key "=0x%" PRIx64, (uint64_t)(x));
#define CTA_DUMP_x04(key, x) fprintf(o, " " #key "=%04x", (unsigned)(x));
#define CTA_DUMP_str(key, x) cta_dump_str(d, #key, x);
#define CTA_DUMP_hex16(key, x)                                                               \
    fprintf(o, " " #key "=");                                                               \
    for (int i = 0; i < 16; i++)                                                            \
        fprintf(o, "%02x", (x)[i]);
#define CTA_DUMP_span(key, x)                                                                \
    fprintf(o, " start=%" PRIu64 " " #key "=%" PRIu64, (uint64_t)(x), rec->ts - (x));
#define CTA_DUMP_side(key, x)                                                                \
    fprintf(o, " %s", ((x) & CT_API_DRIVER) ? "driver" : ((x) & CT_API_LIBRARY) ? "library" : "runtime");
#define CTA_DUMP_none(key, x)
#define CTA_DUMP_comma(key, x) fprintf(o, ",%u", (unsigned)(x));
#define CTA_DUMP_dot(key, x) fprintf(o, ".%u", (unsigned)(x));
#define CTA_DUMP_colon02x(key, x) fprintf(o, ":%02x", (unsigned)(x));
#define CTA_DUMP_opSTREAM(key, x) \
    fprintf(o, " " #key "=%s", (x) == CT_STREAM_DESTROY ? "destroy" : "create");
#define CTA_DUMP_opCOPY(key, x) \
    fprintf(o, " " #key "=%s", (x) == CT_COPY_MEMSET ? "memset" : "memcpy");
#define CTA_DUMP_opMEM(key, x) \
    fprintf(o, " " #key "=%s", (x) == CT_MEM_FREE ? "free" : "alloc");
#define CTA_DUMP_chr(key, x)                                                                 \
    fprintf(o, " " #key "=%c", (x) > 0x20 && (x) < 0x7f ? (char)(x) : '-');
#define CTA_DUMP_relation(key, x) fprintf(o, " " #key "=%s", cta_proc_relation_name(x));
#define CTA_DUMP_opGRAPH(key, x) fprintf(o, " " #key "=%s", graph_op_name(x));
#define CTA_DUMP_FIELD(name, kind, member, unit, dump, style, at)                           \
    if (at == place) {                                                                      \
        CTA_DUMP_##style(dump, v->member)                                                    \
    }
/* The last place a field list uses (ct_records.h: the API record's). */
#define CTA_DUMP_PLACES 6

static const char *cta_proc_relation_name(uint32_t r)
{
    static const char *const names[] = {[CT_PROC_SELF] = "self", [CT_PROC_FORKED] = "forked",
                                        [CT_PROC_CHILD] = "child", [CT_PROC_DESCENDANT] = "descendant"};
    return r < sizeof names / sizeof names[0] ? names[r] : "unknown";
}

static const char *graph_op_name(uint32_t op)
{
    static const char *const names[] = {[CT_GRAPH_CAPTURE_BEGIN] = "capture-begin",
                                        [CT_GRAPH_CAPTURE_END] = "capture-end",
                                        [CT_GRAPH_INSTANTIATE] = "instantiate",
                                        [CT_GRAPH_UPDATE] = "update",
                                        [CT_GRAPH_LAUNCH] = "launch",
                                        [CT_GRAPH_EXEC_DESTROY] = "exec-destroy",
                                        [CT_GRAPH_DESTROY] = "destroy",
                                        [CT_GRAPH_NODE] = "node",
                                        [CT_GRAPH_NODE_SET] = "node-set"};
    return op < sizeof names / sizeof *names && names[op] ? names[op] : "unknown";
}

static void cta_dump_record(cta_dumper *d, const ct_rec *rec)
{
    FILE *o = d->o;
    if (rec->type == CT_REC_CHUNK) {
        const ct_chunk_info *c = &rec->u.chunk;
        fprintf(o, "chunk seq=%" PRIu64 " offset=%" PRIu64 " tid=%u records=%u lost=%" PRIu64
                   " t_min=%" PRIu64 " t_max=%" PRIu64 " low_water=%" PRIu64
                   " max_span=%" PRIu64 " raw=%u payload=%u%s%s%s\n",
                c->seq, c->offset, c->tid, c->nrecords, c->lost, c->t_min, c->t_max,
                c->low_water, c->max_span, c->raw_size, c->payload_size,
                (c->flags & CT_CHUNK_RAW) ? " stored" : " zstd",
                (c->flags & CT_CHUNK_GPU) ? " gpu" : "", (c->flags & CT_CHUNK_FINAL) ? " final" : "");
        return;
    }
    fprintf(o, "%" PRIu64 " %s", rec->ts, ct_rec_type_name(rec->type));
    if (ct_reader_nfiles(d->r) > 1)
        fprintf(o, " file=%u", rec->file);
    fprintf(o, " tid=%u", rec->tid);
    switch (rec->type) {
    case CT_REC_STRING:
        fprintf(o, " id=%u text=", rec->u.string.id);
        cta_dump_quoted(o, rec->u.string.text, rec->u.string.len);
        break;
    case CT_REC_STACK:
        fprintf(o, " id=%u frames=", rec->u.stack.id);
        for (uint32_t i = 0; i < rec->u.stack.nframes; i++)
            fprintf(o, "%s%u", i ? "," : "", rec->u.stack.frames[i]);
        break;
#define CTA_DUMP_CASE(TYPE, member, FIELDS)                                                  \
    case CT_REC_##TYPE: {                                                                   \
        const ct_rec_##member *v = &rec->u.member;                                          \
        for (int place = 0; place < CTA_DUMP_PLACES; place++) {                             \
            FIELDS(CTA_DUMP_FIELD)                                                           \
        }                                                                                   \
        break;                                                                              \
    }
        CT_RECORDS(CTA_DUMP_CASE)
    default:
        fprintf(o, " type=%u bytes=%u", rec->u.unknown.type, rec->u.unknown.len);
        break;
    }
    fputc('\n', o);
}

int cta_dump_trace(FILE *o, ct_reader *r, int file_order)
{
    cta_dumper d = {o, r, 0};
    int rc = CTA_EXIT_OK;
    /* A file's header comes before its first record (file order) or all up front. */
    uint32_t nfiles = (uint32_t)ct_reader_nfiles(r), headers = 0;
    ct_rec rec;
    int n;
    while ((n = ct_reader_next(r, &rec)) > 0) {
        for (; headers < nfiles && (!file_order || headers <= rec.file); headers++) {
            d.file = headers;
            cta_dump_header(&d);
        }
        d.file = rec.file;
        cta_dump_record(&d, &rec);
    }
    for (; headers < nfiles; headers++) {
        d.file = headers;
        cta_dump_header(&d);
    }
    if (n < 0) {
        fprintf(stderr, "cutrace: error: %s\n", ct_reader_error(r));
        rc = CTA_EXIT_INPUT;
    }
    return rc;
}
