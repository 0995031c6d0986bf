/* The file header (FORMAT.md 3.1): collecting it from the running process, encoding it and
 * parsing it. Collection and encoding allocate nothing (the tracer calls them from whatever
 * thread first touches CUDA); parsing is the reader's and allocates one block. */
#define _GNU_SOURCE
#include "cttrace.h"
#include "ct_header.h"
#include "ct_wire.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum {
    CT__H_HOSTNAME = 1, CT__H_PID = 2, CT__H_PPID = 3, CT__H_CMDLINE = 4, CT__H_EXE = 5,
    CT__H_BOOT_ID = 6, CT__H_REALTIME = 7, CT__H_MONOTONIC = 8, CT__H_CLOCK_UNC = 9,
    CT__H_VERSION = 10, CT__H_OPTIONS = 11, CT__H_ENV = 12, CT__H_FRAMEWORKS = 13,
};

/* Scratch allocator over the caller's buffer. */
typedef struct {
    char *p;
    size_t left;
} ct__scratch;

static char *ct__scratch_take(ct__scratch *s, size_t n)
{
    if (n > s->left)
        return NULL;
    char *r = s->p;
    s->p += n;
    s->left -= n;
    return r;
}

/* Reads up to cap - 1 bytes of a small file into a NUL-terminated buffer; length or -1. */
static ssize_t ct__read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

static uint64_t ct__clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ct_header_collect(ct_header *h, const char *version, const char *options, char *scratch,
                      size_t scratch_len)
{
    memset(h, 0, sizeof *h);
    h->major = CT_FORMAT_MAJOR;
    h->minor = CT_FORMAT_MINOR;
    h->tracer_version = version ? version : "";
    h->tracer_options = options ? options : "";
    h->pid = (uint32_t)getpid();
    h->ppid = (uint32_t)getppid();

    uint64_t m0 = ct__clock_ns(CLOCK_MONOTONIC);
    h->realtime_ns = ct__clock_ns(CLOCK_REALTIME);
    uint64_t m1 = ct__clock_ns(CLOCK_MONOTONIC);
    h->monotonic_ns = m0 + (m1 - m0) / 2;
    h->clock_uncertainty_ns = m1 - m0;

    /* Fixed-size parts first, the command line last with whatever room is left. */
    ct__scratch s = {scratch, scratch_len};
    size_t nvars = 0;
    while (ct_job_env_vars[nvars])
        nvars++;
    size_t misalign = (uintptr_t)s.p % _Alignof(char *);
    if (misalign && !ct__scratch_take(&s, _Alignof(char *) - misalign))
        return CT_E_INVAL;
    const char **env = (const char **)(void *)ct__scratch_take(&s, nvars * sizeof(char *));
    char *host = ct__scratch_take(&s, 256);
    char *boot = ct__scratch_take(&s, 64);
    char *exe = ct__scratch_take(&s, 4096);
    if (!env || !host || !boot || !exe)
        return CT_E_INVAL;

    if (gethostname(host, 256) != 0)
        host[0] = 0;
    host[255] = 0;
    h->hostname = host;
    ssize_t n = ct__read_small("/proc/sys/kernel/random/boot_id", boot, 64);
    while (n > 0 && (boot[n - 1] == '\n' || boot[n - 1] == ' '))
        boot[--n] = 0;
    if (n < 0)
        boot[0] = 0;
    h->boot_id = boot;
    n = readlink("/proc/self/exe", exe, 4095);
    exe[n > 0 ? n : 0] = 0;
    h->exe = exe;

    for (size_t i = 0; i < nvars; i++) {
        const char *v = getenv(ct_job_env_vars[i]);
        if (!v)
            continue;
        size_t need = strlen(ct_job_env_vars[i]) + 1 + strlen(v) + 1;
        char *kv = ct__scratch_take(&s, need);
        if (!kv)
            return CT_E_INVAL;
        snprintf(kv, need, "%s=%s", ct_job_env_vars[i], v);
        env[h->nenv++] = kv;
    }
    h->env = env;

    /* The command line may be cut: keep whole arguments only. */
    if (s.left > 1) {
        n = ct__read_small("/proc/self/cmdline", s.p, s.left);
        size_t len = n > 0 ? (size_t)n : 0;
        if (len + 1 >= s.left)
            while (len > 0 && s.p[len - 1] != 0)
                len--;
        h->cmdline = s.p;
        h->cmdline_len = len;
    }
    return 0;
}

static uint8_t *ct__put_field(uint8_t *p, uint32_t tag, const void *v, size_t len)
{
    p = ct__put_uv(p, tag);
    p = ct__put_uv(p, len);
    memcpy(p, v, len);
    return p + len;
}

static uint8_t *ct__put_text(uint8_t *p, uint32_t tag, const char *s)
{
    return s ? ct__put_field(p, tag, s, strlen(s)) : p;
}

static uint8_t *ct__put_num(uint8_t *p, uint32_t tag, uint64_t v)
{
    uint8_t tmp[CT__UV_MAX];
    return ct__put_field(p, tag, tmp, (size_t)(ct__put_uv(tmp, v) - tmp));
}

static size_t ct__text_len(const char *s) { return s ? strlen(s) : 0; }

size_t ct__header_bound(const ct_header *h)
{
    size_t need = 16 + 4 + 13 * 2 * CT__UV_MAX + ct__text_len(h->hostname) + h->cmdline_len +
                  ct__text_len(h->exe) + ct__text_len(h->boot_id) + ct__text_len(h->tracer_version) +
                  ct__text_len(h->tracer_options);
    for (size_t i = 0; i < h->nenv; i++)
        need += 2 * CT__UV_MAX + strlen(h->env[i]);
    return need;
}

ssize_t ct_header_encode(const ct_header *h, void *out, size_t cap)
{
    if (ct__header_bound(h) > cap)
        return CT_E_FULL;
    uint8_t *o = out, *p = o + 16;
    p = ct__put_text(p, CT__H_HOSTNAME, h->hostname);
    p = ct__put_num(p, CT__H_PID, h->pid);
    p = ct__put_num(p, CT__H_PPID, h->ppid);
    if (h->cmdline)
        p = ct__put_field(p, CT__H_CMDLINE, h->cmdline, h->cmdline_len);
    p = ct__put_text(p, CT__H_EXE, h->exe);
    p = ct__put_text(p, CT__H_BOOT_ID, h->boot_id);
    p = ct__put_num(p, CT__H_REALTIME, h->realtime_ns);
    p = ct__put_num(p, CT__H_MONOTONIC, h->monotonic_ns);
    p = ct__put_num(p, CT__H_CLOCK_UNC, h->clock_uncertainty_ns);
    p = ct__put_text(p, CT__H_VERSION, h->tracer_version);
    p = ct__put_text(p, CT__H_OPTIONS, h->tracer_options);
    for (size_t i = 0; i < h->nenv; i++)
        p = ct__put_text(p, CT__H_ENV, h->env[i]);
    if (h->frameworks) /* absent reads as 0, as in files older than 1.1 */
        p = ct__put_num(p, CT__H_FRAMEWORKS, h->frameworks);
    size_t body = (size_t)(p - (o + 16));
    if (body > CT_HEADER_BODY_MAX)
        return CT_E_INVAL;
    memcpy(o, CT_FILE_MAGIC, CT_FILE_MAGIC_LEN);
    ct__le16(o + 8, CT_FORMAT_MAJOR);
    ct__le16(o + 10, CT_FORMAT_MINOR);
    ct__le32(o + 12, (uint32_t)body);
    ct__le32(p, ct__crc32c(o, 16 + body));
    return (ssize_t)(16 + body + 4);
}

int ct__header_parse(const uint8_t *buf, size_t len, ct__header_store *hs)
{
    memset(hs, 0, sizeof *hs);
    ct_header *h = &hs->h;
    assert(len >= 20);
    h->major = ct__rd16(buf + 8);
    h->minor = ct__rd16(buf + 10);
    const uint8_t *p = buf + 16, *end = buf + len - 4;
    /* Every value plus a NUL fits in twice the body; env pointers are counted first. */
    size_t nenv = 0;
    int bad = 0;
    for (const uint8_t *q = p; q < end && !bad;) {
        uint64_t tag = ct__get_uv(&q, end, &bad);
        uint64_t n = ct__get_uv(&q, end, &bad);
        if (bad || n > (uint64_t)(end - q))
            return CT_E_CORRUPT;
        nenv += tag == CT__H_ENV;
        q += n;
    }
    hs->store = malloc((size_t)(end - p) * 2 + 1);
    hs->env = calloc(nenv + 1, sizeof(char *));
    if (!hs->store || !hs->env) {
        ct__header_store_free(hs);
        return CT_E_NOMEM;
    }
    char *s = hs->store;
    while (p < end) {
        uint64_t tag = ct__get_uv(&p, end, &bad);
        uint64_t n = ct__get_uv(&p, end, &bad);
        const uint8_t *v = p, *vend = p + n;
        p = vend;
        char *text = s;
        memcpy(s, v, n);
        s[n] = 0;
        s += n + 1;
        int nbad = 0;
        switch (tag) {
        case CT__H_HOSTNAME: h->hostname = text; break;
        case CT__H_PID: h->pid = ct__get_u32v(&v, vend, &nbad); break;
        case CT__H_PPID: h->ppid = ct__get_u32v(&v, vend, &nbad); break;
        case CT__H_CMDLINE: h->cmdline = text; h->cmdline_len = n; break;
        case CT__H_EXE: h->exe = text; break;
        case CT__H_BOOT_ID: h->boot_id = text; break;
        case CT__H_REALTIME: h->realtime_ns = ct__get_uv(&v, vend, &nbad); break;
        case CT__H_MONOTONIC: h->monotonic_ns = ct__get_uv(&v, vend, &nbad); break;
        case CT__H_CLOCK_UNC: h->clock_uncertainty_ns = ct__get_uv(&v, vend, &nbad); break;
        case CT__H_VERSION: h->tracer_version = text; break;
        case CT__H_OPTIONS: h->tracer_options = text; break;
        case CT__H_ENV: hs->env[h->nenv++] = text; break;
        case CT__H_FRAMEWORKS: h->frameworks = ct__get_uv(&v, vend, &nbad); break;
        default: break; /* a tag from a later minor version */
        }
        if (nbad) {
            ct__header_store_free(hs);
            return CT_E_CORRUPT;
        }
    }
    h->env = hs->env;
    /* Absent text fields read as empty strings, so consumers need no NULL checks. */
    const char **texts[] = {&h->hostname, &h->cmdline, &h->exe, &h->boot_id,
                            &h->tracer_version, &h->tracer_options};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!*texts[i])
            *texts[i] = "";
    return 0;
}

void ct__header_store_free(ct__header_store *hs)
{
    free(hs->store);
    free(hs->env);
    hs->store = NULL;
    hs->env = NULL;
}
