/* Pieces both sides of the library use: error and type names, the job-identity variable list,
 * CRC32C, the record walk of ct_wire.h and the cutting of texts too long for a STRING record. */
#include "cttrace.h"
#include "ct_wire.h"

#include <assert.h>

size_t ct_string_cut_mark(uint64_t full, char mark[CT_STRING_CUT_MAX])
{
    /* CT_STRING_CUT_FMT written by hand: the tracer's signal-handler flush may define a string */
    const size_t head_len = sizeof CT_STRING_CUT_HEAD - 1;
    char digits[20];
    size_t nd = 0;
    do
        digits[nd++] = (char)('0' + full % 10);
    while (full /= 10);
    memcpy(mark, CT_STRING_CUT_HEAD, head_len);
    for (size_t i = 0; i < nd; i++)
        mark[head_len + i] = digits[nd - 1 - i];
    memcpy(mark + head_len + nd, CT_STRING_CUT_TAIL, sizeof CT_STRING_CUT_TAIL);
    return head_len + nd + sizeof CT_STRING_CUT_TAIL - 1;
}

size_t ct_string_cut(const char *text, size_t len, size_t max, char mark[CT_STRING_CUT_MAX])
{
    assert(max >= CT_STRING_CUT_MAX);
    mark[0] = 0;
    if (len <= max)
        return len;
    /* a text cut before keeps the length it had, which its own marker says */
    uint64_t full = len;
    size_t head = ct_string_cut_at(text, len, &full);
    size_t keep = max - ct_string_cut_mark(full, mark);
    keep = keep < head ? keep : head;
    /* a UTF-8 character has at most 3 continuation bytes: never keep part of one */
    for (int back = 0; back < 3 && keep > 0 && ((unsigned char)text[keep] & 0xc0) == 0x80; back++)
        keep--;
    return keep;
}

size_t ct_string_cut_at(const char *text, size_t len, uint64_t *full)
{
    const size_t head = sizeof CT_STRING_CUT_HEAD - 1, tail = sizeof CT_STRING_CUT_TAIL - 1;
    if (len < head + tail || memcmp(text + len - tail, CT_STRING_CUT_TAIL, tail) != 0)
        return len;
    size_t digits = 0;
    while (digits < 19 && len - tail - digits > head &&
           text[len - tail - digits - 1] >= '0' && text[len - tail - digits - 1] <= '9')
        digits++;
    size_t at = len - tail - digits - head;
    if (digits == 0 || memcmp(text + at, CT_STRING_CUT_HEAD, head) != 0)
        return len;
    uint64_t n = 0;
    for (size_t i = 0; i < digits; i++)
        n = n * 10 + (uint64_t)(text[at + head + i] - '0');
    /* a cut text was longer than what is left of it */
    if (n <= len)
        return len;
    *full = n;
    return at;
}

const char *ct_strerror(int code)
{
    switch (code) {
    case CT_OK: return "success";
    case CT_E_IO: return "input/output error";
    case CT_E_EMPTY: return "empty file";
    case CT_E_NOT_TRACE: return "not a cutrace trace";
    case CT_E_VERSION: return "unsupported trace format version";
    case CT_E_CORRUPT: return "damaged trace";
    case CT_E_NOMEM: return "out of memory";
    case CT_E_FULL: return "buffer full";
    case CT_E_INVAL: return "invalid argument";
    case CT_E_ZSTD: return "compression failed";
    default: return "unknown error";
    }
}

const char *ct_rec_type_name(uint32_t type)
{
#define CT__REC_NAME(R, TYPE, member, number, name, form, FIELDS) [number] = name,
    static const char *const names[CT_REC_TYPE_LIMIT] = {CT__REC_TABLE(CT__REC_NAME, ~)};
    if (type == CT_REC_CHUNK)
        return "chunk";
    if (type < CT_REC_TYPE_LIMIT && names[type])
        return names[type];
    return "unknown";
}

const char *const ct_job_env_vars[] = {
    "SLURM_JOB_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "RANK",
    "LOCAL_RANK",   "WORLD_SIZE",   "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL,
};

/* CRC32C: SSE4.2 instruction when the CPU has it, else a byte table. Both are set up by a
 * constructor so that the first call may come from a signal handler. */
static uint32_t ct__crc_table[256];
static int ct__crc_hw;

__attribute__((constructor)) static void ct__crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
        ct__crc_table[i] = c;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    ct__crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t ct__crc_sse(uint32_t c, const uint8_t *p,
                                                              size_t len)
{
    uint64_t c64 = c;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
    }
    c = (uint32_t)c64;
    for (; len; p++, len--)
        c = __builtin_ia32_crc32qi(c, *p);
    return c;
}
#endif

uint32_t ct__crc32c(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t c = 0xFFFFFFFFu;
#if defined(__x86_64__)
    if (ct__crc_hw)
        return ~ct__crc_sse(c, p, len);
#endif
    for (; len; p++, len--)
        c = (c >> 8) ^ ct__crc_table[(c ^ *p) & 0xff];
    return ~c;
}

size_t ct__scan_records(const uint8_t *p, size_t len, uint64_t ts_base, ct__scan_result *out,
                       uint64_t types, ct__scan_fn each, void *ctx)
{
    /* the results live in locals while the walk runs: through out they went to memory at every
     * record (the callback might have seen them), and every record of every chunk read passes here */
    const uint8_t *start = p, *end = p + len;
    uint64_t ts = ts_base, t_min = UINT64_MAX, t_max = 0;
    uint32_t n = 0;
    int sorted = 1, stop = 0;
    while (p < end) {
        int bad = 0;
        const uint8_t *q = p;
        uint64_t type = ct__get_uv(&q, end, &bad);
        uint64_t blen = ct__get_uv(&q, end, &bad);
        if (bad || type == 0 || blen > (uint64_t)(end - q))
            break;
        const uint8_t *body = q;
        uint64_t nts = ts + (uint64_t)ct__get_sv(&body, q + blen, &bad);
        sorted &= nts >= ts;
        ts = nts;
        t_min = ts < t_min ? ts : t_min;
        t_max = ts > t_max ? ts : t_max;
        n++;
        p = q + blen;
        if (type < 64 && (types >> type & 1) && (stop = each(ctx, type, body, p)) < 0)
            break;
    }
    out->t_min = n ? t_min : ts_base;
    out->t_max = n ? t_max : ts_base;
    out->nrecords = n;
    out->sorted = sorted;
    out->stop = stop;
    return (size_t)(p - start);
}
