/* A Kineto file's bytes (cta_ksrc.h): zlib's gzread for the file itself, an inflate stream per
 * gzip stream found inside, each fed by the layer below. */
#include "cta_ksrc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define BLOCK (1 << 16)

/* A gzip stream inside the layer below (gzip inside gzip) */
typedef struct {
    z_stream z;
    unsigned char in[BLOCK]; /* as head, which hands it what was read of it first */
    int end;                 /* the stream ended where the layer below did */
} zlayer;

struct cta_ksrc {
    gzFile gz;
    zlayer *layers[CTA_KINETO_MAX_GZIP];
    int nlayers; /* gzip streams inside the file's own */
    int gzip;
    unsigned char head[BLOCK]; /* the text's first block: read to see what it is */
    size_t hpos, hlen;
    int failed;
    char why[256];
};

static void failf(cta_ksrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(cta_ksrc *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

/* Up to n bytes of layer i (0: the file through gzread; i > 0: the i-th gzip stream inside it):
 * their number, 0 at the end, -1 after failing. */
static long layer_read(cta_ksrc *s, int i, unsigned char *buf, size_t n)
{
    if (s->failed)
        return -1;
    if (i == 0) {
        int got = gzread(s->gz, buf, (unsigned)n);
        int zerr;
        const char *m = gzerror(s->gz, &zerr);
        if (got < 0)
            failf(s, "cannot read: %s", zerr == Z_ERRNO ? strerror(errno) : m);
        else if (got == 0 && zerr != Z_OK) /* a truncated gzip stream ends with Z_BUF_ERROR */
            failf(s, "expected the rest of the gzip stream: %s", m);
        return s->failed ? -1 : got;
    }
    zlayer *l = s->layers[i - 1];
    l->z.next_out = buf;
    l->z.avail_out = (uInt)n;
    while (l->z.avail_out == n && !l->end) {
        if (l->z.avail_in == 0) {
            long got = layer_read(s, i - 1, l->in, sizeof l->in);
            if (got < 0)
                return -1;
            if (got == 0) {
                failf(s, "expected the rest of the gzip stream inside the gzip stream (layer %d "
                         "of %d): it is cut short", i + 1, s->nlayers + 1);
                return -1;
            }
            l->z.next_in = l->in;
            l->z.avail_in = (uInt)got;
        }
        int zr = inflate(&l->z, Z_NO_FLUSH);
        if (zr == Z_STREAM_END) {
            /* another member may follow, as gzip concatenates them */
            if (l->z.avail_in == 0) {
                long got = layer_read(s, i - 1, l->in, sizeof l->in);
                if (got < 0)
                    return -1;
                l->z.next_in = l->in;
                l->z.avail_in = (uInt)got;
            }
            if (l->z.avail_in == 0)
                l->end = 1;
            else
                inflateReset(&l->z);
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            failf(s, "expected a gzip stream inside the gzip stream (layer %d of %d), found "
                     "damaged data: %s", i + 1, s->nlayers + 1, l->z.msg ? l->z.msg : "inflate failed");
            return -1;
        }
    }
    return (long)(n - l->z.avail_out);
}

cta_ksrc *cta_ksrc_open(const char *path, char *err, size_t errlen)
{
    cta_ksrc *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    errno = 0;
    s->gz = gzopen(path, "rb");
    if (!s->gz) {
        snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        free(s);
        return NULL;
    }
    gzbuffer(s->gz, 1 << 18);
    long n = layer_read(s, 0, s->head, sizeof s->head);
    s->gzip = !gzdirect(s->gz);
    while (n >= 2 && s->head[0] == 0x1f && s->head[1] == 0x8b) {
        s->gzip = 1;
        if (s->nlayers + 1 >= CTA_KINETO_MAX_GZIP) {
            failf(s, "expected JSON inside at most %d layers of gzip compression, found gzip "
                     "compressed more times over", CTA_KINETO_MAX_GZIP);
            break;
        }
        zlayer *l = calloc(1, sizeof *l);
        if (!l || inflateInit2(&l->z, 16 + MAX_WBITS) != Z_OK) {
            free(l);
            failf(s, "out of memory");
            break;
        }
        s->layers[s->nlayers++] = l;
        memcpy(l->in, s->head, (size_t)n);
        l->z.next_in = l->in;
        l->z.avail_in = (uInt)n;
        n = layer_read(s, s->nlayers, s->head, sizeof s->head);
    }
    s->hlen = n > 0 ? (size_t)n : 0;
    if (s->hlen >= 3 && !memcmp(s->head, "\xEF\xBB\xBF", 3))
        s->hpos = 3;
    else if (s->hlen >= 2 && (!memcmp(s->head, "\xFF\xFE", 2) || !memcmp(s->head, "\xFE\xFF", 2)))
        failf(s, "expected UTF-8 text, found UTF-16 (its byte-order mark %02X %02X)", s->head[0],
              s->head[1]);
    return s;
}

long cta_ksrc_read(cta_ksrc *s, unsigned char *buf, size_t n)
{
    if (s->failed)
        return -1;
    if (s->hpos < s->hlen) {
        size_t k = s->hlen - s->hpos < n ? s->hlen - s->hpos : n;
        memcpy(buf, s->head + s->hpos, k);
        s->hpos += k;
        return (long)k;
    }
    return layer_read(s, s->nlayers, buf, n);
}

const char *cta_ksrc_error(const cta_ksrc *s) { return s->why; }

int cta_ksrc_gzip(const cta_ksrc *s) { return s->gzip; }

void cta_ksrc_close(cta_ksrc *s)
{
    for (int i = 0; i < s->nlayers; i++) {
        inflateEnd(&s->layers[i]->z);
        free(s->layers[i]);
    }
    gzclose(s->gz);
    free(s);
}
