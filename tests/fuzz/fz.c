#define _GNU_SOURCE
#include "fz.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "cttrace.h"
#include "ct_wire.h"

/* Offset of the first chunk, or 0 if the file header cannot be walked. */
static size_t fz_header_end(const uint8_t *buf, size_t len)
{
    if (len < 20 || memcmp(buf, CT_FILE_MAGIC, CT_FILE_MAGIC_LEN) != 0)
        return 0;
    uint64_t body = ct__rd32(buf + 12);
    if (body > len - 20)
        return 0;
    return 16 + (size_t)body + 4;
}

/* Size of the chunk at off if its header fields let it be walked (magic, header size, payload
 * inside the image), else 0; *hs gets its header size. */
static size_t fz_chunk_size(const uint8_t *buf, size_t len, size_t off, uint32_t *hs)
{
    if (len - off < CT_CHUNK_HEADER_MIN || ct__rd32(buf + off) != CT_CHUNK_MAGIC)
        return 0;
    *hs = ct__rd16(buf + off + 4);
    if (*hs < CT_CHUNK_HEADER_MIN || *hs > 4096 || *hs > len - off)
        return 0;
    uint64_t total = (uint64_t)*hs + ct__rd32(buf + off + 8);
    return total <= len - off ? (size_t)total : 0;
}

void fz_fix_checksums(uint8_t *buf, size_t len)
{
    size_t off = fz_header_end(buf, len);
    if (!off)
        return;
    ct__le32(buf + off - 4, ct__crc32c(buf, off - 4));
    uint32_t hs;
    size_t n;
    while (off < len && (n = fz_chunk_size(buf, len, off, &hs)) != 0) {
        uint8_t *h = buf + off;
        ct__le32(h + 80, ct__crc32c(h + hs, n - hs));
        ct__le32(h + hs - 4, ct__crc32c(h, hs - 4));
        off += n;
    }
}

uint8_t *fz_rawify(const uint8_t *in, size_t len, size_t *out_len)
{
    size_t off = fz_header_end(in, len);
    if (!off)
        return NULL;
    /* Stored chunks are at most CT_CHUNK_RAW_MAX each; grow as needed. */
    size_t cap = len * 4 + 4096, o = off;
    uint8_t *out = malloc(cap);
    if (!out)
        return NULL;
    memcpy(out, in, off);
    uint32_t hs;
    size_t n;
    while (off < len && (n = fz_chunk_size(in, len, off, &hs)) != 0) {
        const uint8_t *h = in + off;
        uint32_t raw = ct__rd32(h + 12), flags = ct__rd16(h + 6);
        if (raw > CT_CHUNK_RAW_MAX)
            break;
        if (o + hs + raw > cap) {
            cap = (o + hs + raw) * 2;
            uint8_t *nb = realloc(out, cap);
            if (!nb)
                break;
            out = nb;
        }
        uint8_t *oh = out + o;
        memcpy(oh, h, hs);
        if (flags & CT_CHUNK_RAW) {
            memcpy(oh + hs, h + hs, raw);
        } else {
            size_t got = ZSTD_decompress(oh + hs, raw, h + hs, n - hs);
            if (ZSTD_isError(got) || got != raw)
                break;
            ct__le16(oh + 6, (uint16_t)(flags | CT_CHUNK_RAW));
            ct__le32(oh + 8, raw);
        }
        ct__le32(oh + 80, ct__crc32c(oh + hs, raw));
        ct__le32(oh + hs - 4, ct__crc32c(oh, hs - 4));
        o += hs + raw;
        off += n;
    }
    *out_len = o;
    return out;
}

static int fz_input_fd = -1;
static char fz_input_path[64];

void fz_input_open(const char *name)
{
    fz_input_fd = memfd_create(name, MFD_CLOEXEC);
    if (fz_input_fd < 0)
        abort();
    snprintf(fz_input_path, sizeof fz_input_path, "/proc/self/fd/%d", fz_input_fd);
}

const char *fz_input(const uint8_t *data, size_t size, int fix)
{
    uint8_t *fixed = NULL;
    if (fix) {
        fixed = malloc(size ? size : 1);
        if (!fixed)
            abort();
        memcpy(fixed, data, size);
        fz_fix_checksums(fixed, size);
        data = fixed;
    }
    if (ftruncate(fz_input_fd, 0) != 0 || pwrite(fz_input_fd, data, size, 0) != (ssize_t)size)
        abort();
    free(fixed);
    return fz_input_path;
}

static void fz_quiet(void *ctx, const char *path, const char *msg)
{
    (void)path;
    /* Touch the message: a warning built from file data must be a valid string. */
    *(size_t *)ctx += strlen(msg) > 0;
}

/* Where the lengths of everything resolved go, so that no lookup is optimized away and every
 * string is read to its end (under ASan, a string without its NUL is caught here). */
static volatile size_t fz_sink;

/* Resolves what a record names, as the analyzer does; returns the sum of the lengths. */
static size_t fz_resolve(const ct_reader *r, const ct_rec *rec)
{
    char tmp[CT_STRTMP];
    size_t sum = 0;
    uint32_t ids[2] = {0, 0};
    uint32_t stack = 0;
    switch (rec->type) {
    case CT_REC_API: ids[0] = rec->u.api.function; break;
    case CT_REC_LAUNCH: ids[0] = rec->u.launch.function; ids[1] = rec->u.launch.symbol; break;
    case CT_REC_THREAD: ids[0] = rec->u.thread.name; break;
    case CT_REC_DEVICE: ids[0] = rec->u.device.name; break;
    case CT_REC_MEM: stack = rec->u.mem.stack; break;
    case CT_REC_STACK: stack = rec->u.stack.id; break;
    case CT_REC_STRING: sum += strnlen(rec->u.string.text, rec->u.string.len); break;
    case CT_REC_UNKNOWN:
        for (uint32_t i = 0; i < rec->u.unknown.len; i++)
            sum += rec->u.unknown.bytes[i];
        break;
    default: break;
    }
    for (int i = 0; i < 2; i++)
        sum += strlen(ct_reader_str(r, rec->file, ids[i], tmp));
    const uint32_t *frames;
    uint32_t n;
    if (stack && ct_reader_stack(r, rec->file, stack, &frames, &n) == 0) {
        for (uint32_t i = 0; i < n; i++) {
            ct_rec_frame fr;
            if (ct_reader_frame(r, rec->file, frames[i], &fr) == 0)
                sum += strlen(ct_reader_str(r, rec->file, fr.function, tmp)) +
                       strlen(ct_reader_str(r, rec->file, fr.module, tmp));
        }
    }
    return sum;
}

long fz_read_all(const char *path)
{
    /* the last mode reads the two files apart (ct_reader_next_in), the second first */
    static const ct_reader_opts modes[4] = {
        {.file_order = 1, .chunk_records = 1},
        {0},
        {.max_pending = 4096},
        {0},
    };
    const char *paths[2] = {path, path};
    long total = 0;
    size_t warnings = 0, sum = 0;
    for (int m = 0; m < 4; m++) {
        ct_reader_opts o = modes[m];
        o.warn = fz_quiet;
        o.warn_ctx = &warnings;
        ct_reader *r;
        char err[512];
        if (ct_reader_open(&r, paths, m >= 2 ? 2 : 1, &o, err, sizeof err) < 0)
            return -1;
        for (uint32_t f = 0; f < ct_reader_nfiles(r); f++) {
            const ct_header *h = ct_reader_header(r, f);
            sum += strlen(h->hostname) + strlen(h->exe) + strlen(h->boot_id) + h->cmdline_len;
            for (size_t i = 0; i < h->nenv; i++)
                sum += strlen(h->env[i]);
        }
        ct_rec rec;
        int got = 0;
        if (m == 3) {
            for (uint32_t f = 2; f-- > 0 && got >= 0;)
                while ((got = ct_reader_next_in(r, f, &rec)) > 0) {
                    sum += fz_resolve(r, &rec);
                    total++;
                }
        } else {
            while ((got = ct_reader_next(r, &rec)) > 0) {
                sum += fz_resolve(r, &rec);
                total++;
            }
        }
        ct_reader_close(r);
        if (got < 0)
            return -1;
    }
    fz_sink += sum;
    return total;
}

#define FZ_CMD(...) (const char *const[]){__VA_ARGS__, NULL}
const char *const *const fz_commands[] = {
    FZ_CMD("dump", "@"),
    FZ_CMD("dump", "--time-order", "@", "@"),
    FZ_CMD("summary", "@"),
    FZ_CMD("summary", "--json", "--variants", "--top", "0", "@"),
    FZ_CMD("summary", "--json", "--overview", "50", "--series-bins", "7", "@"),
    FZ_CMD("timeline", "-o", "/dev/null", "@"),
    FZ_CMD("export", "--sqlite", "%sqlite", "@"),
    FZ_CMD("export", "--csv", "%csv", "@"),
    NULL,
};

static char fz_scratch[4096];

static int fz_rm(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

void fz_scratch_remove(void)
{
    if (fz_scratch[0])
        nftw(fz_scratch, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
    fz_scratch[0] = 0;
}

int fz_argv(size_t c, const char *path, char *argv[16])
{
    static char out[4200];
    int n = 0;
    for (size_t i = 0; fz_commands[c][i] && n < 15; i++) {
        const char *a = fz_commands[c][i];
        if (!strcmp(a, "@")) {
            a = path;
        } else if (a[0] == '%') {
            if (!fz_scratch[0]) {
                const char *tmp = getenv("TMPDIR");
                snprintf(fz_scratch, sizeof fz_scratch, "%s/cutrace-fz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
                if (!mkdtemp(fz_scratch)) {
                    perror(fz_scratch);
                    abort();
                }
            }
            snprintf(out, sizeof out, "%s/%s", fz_scratch, a + 1);
            a = out;
        }
        argv[n++] = (char *)a;
    }
    argv[n] = NULL;
    return n;
}
