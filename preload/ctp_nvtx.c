/* libcutrace as an NVTX injection library (see ctp_nvtx.h).
 *
 * Provenance: written for cutrace from the interface NVIDIA's NVTX3 headers define (CUDA
 * toolkit, nvtx3/nvToolsExt.h and nvtx3/nvtxDetail/nvtxTypes.h, nvtxInit.h: the entry point
 * InitializeInjectionNvtx2, the export table NVTX_ETID_CALLBACKS and its GetModuleFunctionTable,
 * the NVTX_CBID_CORE and NVTX_CBID_CORE2 slot numbers, nvtxEventAttributes_t). Only those
 * headers' types are used (NVTX_NO_IMPL: none of their code is compiled in). */
#define _GNU_SOURCE
#include "ctp_nvtx.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "ctp_capture.h"
#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_session.h"

/* Levels per domain, kept whether or not the thread is traced, so that the values
 * nvtxRangePush/Pop return stay right when a trace starts in the middle of a nesting. */
static __thread uint16_t ctp_nvtx_depth[CTP_NVTX_DOMAINS] __attribute__((tls_model("initial-exec")));
/* Per domain, bit L: the push at level L began in a capture window (ctp_capture.h), so its pop is
 * recorded too; levels past 63 are recorded while a window is open. */
static __thread uint64_t ctp_nvtx_kept[CTP_NVTX_DOMAINS] __attribute__((tls_model("initial-exec")));
/* Start/end range ids: the thread's base (from a process-wide counter, once per thread) | seq. */
static __thread uint64_t ctp_nvtx_next __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t ctp_nvtx_threads;
static pthread_mutex_t ctp_nvtx_mu = PTHREAD_MUTEX_INITIALIZER; /* domain creation only */

/* The calling thread's state if a trace runs (registering the thread on its first NVTX call),
 * else NULL: NVTX alone never starts a trace. */
static inline ctp_thread *ctp_nvtx_thread(void)
{
    ctp_thread *th = ctp_tls;
    if (__builtin_expect(th != 0 && th != &ctp_untraced, 1))
        return th;
    if (th || !ctp_session_running())
        return NULL;
    return ctp_thread_slow();
}

/* A wide message as UTF-8 into out (at most cap bytes, whole characters); its length. out NULL:
 * only measured. */
static size_t ctp_nvtx_utf8(char *out, size_t cap, const wchar_t *s)
{
    size_t n = 0;
    for (; *s; s++) {
        uint32_t c = (uint32_t)*s;
        unsigned k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (n + k > cap)
            break;
        if (!out) {
            n += k;
            continue;
        }
        if (k == 1) {
            out[n++] = (char)c;
            continue;
        }
        for (unsigned i = k - 1; i > 0; i--)
            out[n + i] = (char)(0x80 | ((c >> (6 * (k - 1 - i))) & 0x3f));
        out[n] = (char)((0xf0 << (4 - k)) | (c >> (6 * (k - 1))));
        n += k;
    }
    return n;
}

/* A message (text, of len bytes as strnlen(text, CTP_NVTX_TEXT + 1) measured it, or wtext) as
 * UTF-8 into out, at most CTP_NVTX_TEXT bytes; its length. One longer is cut as a STRING record
 * over the format's limit is (ct_string_cut: its head, then "...[truncated, N bytes]" with its
 * whole length), so every output shows the cut; only such a message is measured whole. */
static size_t ctp_nvtx_copy(char *out, const char *text, size_t len, const wchar_t *wtext)
{
    char mark[CT_STRING_CUT_MAX];
    size_t keep;
    if (text) {
        if (len > CTP_NVTX_TEXT)
            len += strlen(text + len);
        keep = ct_string_cut(text, len, CTP_NVTX_TEXT, mark);
        memcpy(out, text, keep);
    } else if (wtext) {
        len = ctp_nvtx_utf8(NULL, SIZE_MAX, wtext);
        if (len <= CTP_NVTX_TEXT)
            return ctp_nvtx_utf8(out, CTP_NVTX_TEXT, wtext);
        keep = ctp_nvtx_utf8(out, CTP_NVTX_TEXT - ct_string_cut_mark(len, mark), wtext);
    } else {
        return 0;
    }
    size_t n = strlen(mark);
    memcpy(out + keep, mark, n);
    return keep + n;
}

/* Appends one raw NVTX record with its message (text, or wide text) at the current time. A
 * record with no attributes but its level or id (most pushes) is "plain": that one word, then
 * the message, its length in the aux bits (5 words fewer in the ring). */
static inline void ctp_nvtx_put(ctp_thread *th, unsigned op, unsigned dom, ctp_nvtx_raw *r,
                               const char *text, const wchar_t *wtext)
{
    uint64_t held = ctp_ring_hold(&th->ring, th->last_return);
    uint64_t now = ctp_ticks();
    size_t len = text ? strnlen(text, CTP_NVTX_TEXT + 1) : 0, room = len;
    if (wtext) /* room for its UTF-8: at most 4 bytes a character */
        room = wcsnlen(wtext, CTP_NVTX_TEXT) * 4;
    room = room < CTP_NVTX_TEXT ? room : CTP_NVTX_TEXT;
    int plain = !r->registered && !r->payload && !(r->category | r->color | r->payload_kind |
                                                   r->flags);
    size_t head = plain ? 8 : sizeof *r;
    unsigned n = 2 + (unsigned)((head + room + 7) / 8);
    uint64_t *w = ctp_ring_reserve(&th->ring, n);
    if (!w) {
        ctp_ring_unhold(&th->ring, held);
        return;
    }
    w[1] = now;
    w[n - 1] = 0;
    len = ctp_nvtx_copy((char *)(w + 2) + head, text, len, wtext);
    if (plain) {
        w[0] = ctp_raw_w0(CTP_RAW_NVTX, n, op | CTP_NVTX_PLAIN, dom | (uint32_t)len << 16);
        w[2] = op == CTP_NVTX_PUSH ? r->depth : r->id;
    } else {
        w[0] = ctp_raw_w0(CTP_RAW_NVTX, n, op, dom);
        r->len = (uint32_t)len;
        memcpy(w + 2, r, sizeof *r);
    }
    ctp_publish(th, n);
    ctp_ring_unhold(&th->ring, held);
}

/* A pop's or an end's record: one word (a pop's level | flags << 32, an end's id). */
static inline void ctp_nvtx_put_word(ctp_thread *th, unsigned op, unsigned dom, uint64_t v)
{
    uint64_t held = ctp_ring_hold(&th->ring, th->last_return);
    uint64_t now = ctp_ticks();
    uint64_t *w = ctp_ring_reserve(&th->ring, 3);
    if (w) {
        w[0] = ctp_raw_w0(CTP_RAW_NVTX, 3, op, dom);
        w[1] = now;
        w[2] = v;
        ctp_publish(th, 3);
    }
    ctp_ring_unhold(&th->ring, held);
}

static inline unsigned ctp_nvtx_dom(nvtxDomainHandle_t d)
{
    uintptr_t i = (uintptr_t)d;
    return i < CTP_NVTX_DOMAINS ? (unsigned)i : 0;
}

/* The attributes of an Ex call into r; the message in *text / *wtext. */
static inline void ctp_nvtx_attrs(const nvtxEventAttributes_t *a, ctp_nvtx_raw *r,
                                 const char **text, const wchar_t **wtext)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return;
    r->category = a->category;
    if (a->colorType == NVTX_COLOR_ARGB) {
        r->color = a->color;
        r->flags |= CT_NVTX_COLOR;
    }
    r->payload_kind = (uint32_t)a->payloadType;
    switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: case NVTX_PAYLOAD_TYPE_INT64:
    case NVTX_PAYLOAD_TYPE_DOUBLE:
        memcpy(&r->payload, &a->payload, 8);
        break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: case NVTX_PAYLOAD_TYPE_INT32:
    case NVTX_PAYLOAD_TYPE_FLOAT: {
        uint32_t v;
        memcpy(&v, &a->payload, 4);
        r->payload = v;
        break;
    }
    default:
        r->payload_kind = 0;
    }
    *text = a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : NULL;
    *wtext = a->messageType == NVTX_MESSAGE_TYPE_UNICODE ? a->message.unicode : NULL;
    r->registered = a->messageType == NVTX_MESSAGE_TYPE_REGISTERED
                        ? (const char *)a->message.registered : NULL;
}

/* The record of a push, start or mark r (its attributes a, or its message text / wtext), if
 * a trace runs. Outside the capture windows (ctp_capture.h) the callers record only names. */
static inline void ctp_nvtx_record(unsigned op, unsigned dom, ctp_nvtx_raw r,
                                  const nvtxEventAttributes_t *a, const char *text,
                                  const wchar_t *wtext)
{
    ctp_thread *th = ctp_nvtx_thread();
    if (th) {
        ctp_nvtx_attrs(a, &r, &text, &wtext);
        ctp_nvtx_put(th, op, dom, &r, text, wtext);
    }
}

/* The message of a push or start (for --capture-range nvtx:NAME) as UTF-8: its length, *msg
 * pointing to it (into buf for a wide one). */
static size_t ctp_nvtx_message(const nvtxEventAttributes_t *a, const char *text,
                               const wchar_t *wtext, char buf[CTP_NVTX_TEXT], const char **msg)
{
    ctp_nvtx_raw r = {0};
    ctp_nvtx_attrs(a, &r, &text, &wtext);
    *msg = r.registered ? r.registered : text ? text : buf;
    if (*msg != buf)
        return strnlen(*msg, CTP_NVTX_TEXT);
    return wtext ? ctp_nvtx_utf8(buf, CTP_NVTX_TEXT, wtext) : 0;
}

/* ---- push/pop ---- */
static int ctp_nvtx_push(unsigned dom, const nvtxEventAttributes_t *a, const char *text,
                        const wchar_t *wtext)
{
    uint16_t d = ctp_nvtx_depth[dom];
    if (d == UINT16_MAX)
        return -1;
    ctp_nvtx_depth[dom] = (uint16_t)(d + 1);
    if (__builtin_expect(ctp_capture_nvtx(), 0)) {
        char buf[CTP_NVTX_TEXT];
        const char *msg;
        size_t len = ctp_nvtx_message(a, text, wtext, buf, &msg);
        ctp_capture_mark(ctp_nvtx_thread(), ctp_capture_push(dom, d, msg, len));
    }
    int keep = !ctp_capture_paused();
    if (d < 64) /* its pop is recorded if it is */
        ctp_nvtx_kept[dom] = keep ? ctp_nvtx_kept[dom] | 1ull << d : ctp_nvtx_kept[dom] & ~(1ull << d);
    if (keep)
        ctp_nvtx_record(CTP_NVTX_PUSH, dom, (ctp_nvtx_raw){.depth = d}, a, text, wtext);
    return d;
}

static int ctp_nvtx_pop(unsigned dom)
{
    uint16_t d = ctp_nvtx_depth[dom];
    int level = d ? d - 1 : -1;
    if (d)
        ctp_nvtx_depth[dom] = (uint16_t)(d - 1);
    int kept = d && d <= 64 ? (int)(ctp_nvtx_kept[dom] >> (d - 1) & 1) : !ctp_capture_paused();
    ctp_thread *th = kept ? ctp_nvtx_thread() : NULL;
    if (th)
        ctp_nvtx_put_word(th, CTP_NVTX_POP, dom,
                          d ? d - 1u : (uint64_t)CT_NVTX_UNMATCHED << 32);
    if (__builtin_expect(ctp_capture_nvtx(), 0) && d)
        ctp_capture_mark(ctp_nvtx_thread(), ctp_capture_pop(dom, d - 1u));
    return level;
}

static int NVTX_API ctp_RangePushEx(const nvtxEventAttributes_t *a) { return ctp_nvtx_push(0, a, NULL, NULL); }
static int NVTX_API ctp_RangePushA(const char *m) { return ctp_nvtx_push(0, NULL, m, NULL); }
static int NVTX_API ctp_RangePushW(const wchar_t *m) { return ctp_nvtx_push(0, NULL, NULL, m); }
static int NVTX_API ctp_RangePop(void) { return ctp_nvtx_pop(0); }
static int NVTX_API ctp_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return ctp_nvtx_push(ctp_nvtx_dom(d), a, NULL, NULL);
}
static int NVTX_API ctp_DomainRangePop(nvtxDomainHandle_t d) { return ctp_nvtx_pop(ctp_nvtx_dom(d)); }

/* ---- start/end ---- */
static nvtxRangeId_t ctp_nvtx_start(unsigned dom, const nvtxEventAttributes_t *a,
                                   const char *text, const wchar_t *wtext)
{
    if (__builtin_expect(ctp_nvtx_next == 0, 0))
        ctp_nvtx_next = (atomic_fetch_add(&ctp_nvtx_threads, 1) + 1) << 32;
    nvtxRangeId_t id = ++ctp_nvtx_next;
    if (__builtin_expect(ctp_capture_nvtx(), 0)) {
        char buf[CTP_NVTX_TEXT];
        const char *msg;
        size_t len = ctp_nvtx_message(a, text, wtext, buf, &msg);
        ctp_capture_mark(ctp_nvtx_thread(), ctp_capture_start(dom, id, msg, len));
    }
    if (ctp_capture_paused()) /* begun outside the capture windows: its end is not recorded */
        id |= CTP_NVTX_ID_UNKEPT;
    else if (ctp_nvtx_thread()) /* the writer then knows an end without this bit has no start */
        id |= CTP_NVTX_ID_RECORDED;
    if (!(id & CTP_NVTX_ID_UNKEPT))
        ctp_nvtx_record(CTP_NVTX_START, dom, (ctp_nvtx_raw){.id = id}, a, text, wtext);
    return id;
}

static void ctp_nvtx_end(unsigned dom, nvtxRangeId_t id)
{
    ctp_thread *th = id & CTP_NVTX_ID_UNKEPT ? NULL : ctp_nvtx_thread();
    if (th)
        ctp_nvtx_put_word(th, CTP_NVTX_END, dom, id);
    if (__builtin_expect(ctp_capture_nvtx(), 0))
        ctp_capture_mark(ctp_nvtx_thread(), ctp_capture_end(id));
}

static nvtxRangeId_t NVTX_API ctp_RangeStartEx(const nvtxEventAttributes_t *a) { return ctp_nvtx_start(0, a, NULL, NULL); }
static nvtxRangeId_t NVTX_API ctp_RangeStartA(const char *m) { return ctp_nvtx_start(0, NULL, m, NULL); }
static nvtxRangeId_t NVTX_API ctp_RangeStartW(const wchar_t *m) { return ctp_nvtx_start(0, NULL, NULL, m); }
static void NVTX_API ctp_RangeEnd(nvtxRangeId_t id) { ctp_nvtx_end(0, id); }
static nvtxRangeId_t NVTX_API ctp_DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return ctp_nvtx_start(ctp_nvtx_dom(d), a, NULL, NULL);
}
static void NVTX_API ctp_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { ctp_nvtx_end(ctp_nvtx_dom(d), id); }

/* ---- marks and names (a mark record whose flags say what it names) ---- */
static void ctp_nvtx_mark(unsigned dom, const nvtxEventAttributes_t *a, const char *text,
                         const wchar_t *wtext, uint32_t flags, uint32_t category, uint64_t id)
{
    if (ctp_capture_paused() && !flags) /* a name is kept, a mark is an event */
        return;
    ctp_nvtx_record(CTP_NVTX_MARK, dom,
                    (ctp_nvtx_raw){.id = id, .flags = flags, .category = category}, a, text, wtext);
}

static void NVTX_API ctp_MarkEx(const nvtxEventAttributes_t *a) { ctp_nvtx_mark(0, a, NULL, NULL, 0, 0, 0); }
static void NVTX_API ctp_MarkA(const char *m) { ctp_nvtx_mark(0, NULL, m, NULL, 0, 0, 0); }
static void NVTX_API ctp_MarkW(const wchar_t *m) { ctp_nvtx_mark(0, NULL, NULL, m, 0, 0, 0); }
static void NVTX_API ctp_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    ctp_nvtx_mark(ctp_nvtx_dom(d), a, NULL, NULL, 0, 0, 0);
}
static void NVTX_API ctp_NameCategoryA(uint32_t c, const char *m) { ctp_nvtx_mark(0, NULL, m, NULL, CT_NVTX_CATEGORY_NAME, c, 0); }
static void NVTX_API ctp_NameCategoryW(uint32_t c, const wchar_t *m) { ctp_nvtx_mark(0, NULL, NULL, m, CT_NVTX_CATEGORY_NAME, c, 0); }
static void NVTX_API ctp_DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *m)
{
    ctp_nvtx_mark(ctp_nvtx_dom(d), NULL, m, NULL, CT_NVTX_CATEGORY_NAME, c, 0);
}
static void NVTX_API ctp_DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t *m)
{
    ctp_nvtx_mark(ctp_nvtx_dom(d), NULL, NULL, m, CT_NVTX_CATEGORY_NAME, c, 0);
}
static void NVTX_API ctp_NameOsThreadA(uint32_t tid, const char *m) { ctp_nvtx_mark(0, NULL, m, NULL, CT_NVTX_THREAD_NAME, 0, tid); }
static void NVTX_API ctp_NameOsThreadW(uint32_t tid, const wchar_t *m) { ctp_nvtx_mark(0, NULL, NULL, m, CT_NVTX_THREAD_NAME, 0, tid); }

/* ---- domains and registered strings: kept for the life of the process (a handle the program
 * holds must stay valid; NVTX programs create a handful) ---- */
static char *ctp_nvtx_text(const char *s, const wchar_t *ws)
{
    char buf[CTP_NVTX_TEXT + 1];
    buf[ctp_nvtx_copy(buf, s, s ? strnlen(s, CTP_NVTX_TEXT + 1) : 0, ws)] = 0;
    return strdup(buf);
}

/* The index of the domain named s (an existing one, or a new one); 0, the default domain,
 * when every index is taken or memory is short. */
static nvtxDomainHandle_t ctp_nvtx_domain(const char *s, const wchar_t *ws)
{
    if (!s && !ws)
        return NULL;
    int saved = errno;
    char *name = ctp_nvtx_text(s, ws);
    uintptr_t i = 0;
    pthread_mutex_lock(&ctp_nvtx_mu);
    for (i = 1; name && i < CTP_NVTX_DOMAINS && ctp_nvtx_domain_names[i]; i++)
        if (strcmp(ctp_nvtx_domain_names[i], name) == 0)
            break;
    if (!name || i == CTP_NVTX_DOMAINS)
        i = 0;
    else if (!ctp_nvtx_domain_names[i]) {
        ctp_nvtx_domain_names[i] = name;
        name = NULL;
    }
    pthread_mutex_unlock(&ctp_nvtx_mu);
    free(name);
    errno = saved;
    return (nvtxDomainHandle_t)i;
}

static nvtxDomainHandle_t NVTX_API ctp_DomainCreateA(const char *m) { return ctp_nvtx_domain(m, NULL); }
static nvtxDomainHandle_t NVTX_API ctp_DomainCreateW(const wchar_t *m) { return ctp_nvtx_domain(NULL, m); }
static void NVTX_API ctp_DomainDestroy(nvtxDomainHandle_t d) { (void)d; }

static nvtxStringHandle_t ctp_nvtx_register(const char *s, const wchar_t *ws)
{
    int saved = errno;
    char *t = s || ws ? ctp_nvtx_text(s, ws) : NULL;
    errno = saved;
    return (nvtxStringHandle_t)t;
}
static nvtxStringHandle_t NVTX_API ctp_DomainRegisterStringA(nvtxDomainHandle_t d, const char *m)
{
    (void)d;
    return ctp_nvtx_register(m, NULL);
}
static nvtxStringHandle_t NVTX_API ctp_DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *m)
{
    (void)d;
    return ctp_nvtx_register(NULL, m);
}
static void NVTX_API ctp_Initialize(const void *reserved) { (void)reserved; }

/* ---- the handshake ---- */
typedef void (*ctp_nvtx_fn)(void);
#define CTP_NVTX_SLOT(cbid, fn) [cbid] = (ctp_nvtx_fn)(fn)

static const ctp_nvtx_fn ctp_nvtx_core[NVTX_CBID_CORE_SIZE] = {
    CTP_NVTX_SLOT(NVTX_CBID_CORE_MarkEx, ctp_MarkEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_MarkA, ctp_MarkA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_MarkW, ctp_MarkW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangeStartEx, ctp_RangeStartEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangeStartA, ctp_RangeStartA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangeStartW, ctp_RangeStartW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangeEnd, ctp_RangeEnd),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangePushEx, ctp_RangePushEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangePushA, ctp_RangePushA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangePushW, ctp_RangePushW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_RangePop, ctp_RangePop),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_NameCategoryA, ctp_NameCategoryA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_NameCategoryW, ctp_NameCategoryW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_NameOsThreadA, ctp_NameOsThreadA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE_NameOsThreadW, ctp_NameOsThreadW),
};

static const ctp_nvtx_fn ctp_nvtx_core2[NVTX_CBID_CORE2_SIZE] = {
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainMarkEx, ctp_DomainMarkEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRangeStartEx, ctp_DomainRangeStartEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRangeEnd, ctp_DomainRangeEnd),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRangePushEx, ctp_DomainRangePushEx),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRangePop, ctp_DomainRangePop),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainNameCategoryA, ctp_DomainNameCategoryA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainNameCategoryW, ctp_DomainNameCategoryW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRegisterStringA, ctp_DomainRegisterStringA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainRegisterStringW, ctp_DomainRegisterStringW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainCreateA, ctp_DomainCreateA),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainCreateW, ctp_DomainCreateW),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_DomainDestroy, ctp_DomainDestroy),
    CTP_NVTX_SLOT(NVTX_CBID_CORE2_Initialize, ctp_Initialize),
};

/* Fills the NVTX library's slots of one module with ours; slots we do not serve (resources)
 * keep the library's no-op. 1 on success. */
static int ctp_nvtx_fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                        const ctp_nvtx_fn *ours, unsigned n)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (unsigned i = 1; i < size && i < n; i++)
        if (ours[i] && table[i])
            *table[i] = ours[i];
    return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    if (!cb || cb->struct_size < sizeof *cb)
        return 0;
    return ctp_nvtx_fill(cb, NVTX_CB_MODULE_CORE, ctp_nvtx_core, NVTX_CBID_CORE_SIZE) &&
           ctp_nvtx_fill(cb, NVTX_CB_MODULE_CORE2, ctp_nvtx_core2, NVTX_CBID_CORE2_SIZE);
}
