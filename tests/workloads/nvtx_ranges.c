/* nvtx_ranges: a CUDA program that names its phases with NVTX (C API, nvtx3/nvToolsExt.h).
 *
 * It starts a range "before-cuda" (no trace runs yet), makes one cudaMalloc/cudaFree (a trace
 * starts with the first CUDA call) and ends that range, then does:
 *   - 4 threads (named "nvtx-0".."nvtx-3" with nvtxNameOsThreadA), each 20 times: push "outer",
 *     push "middle", push "inner", pop x3, measuring CLOCK_MONOTONIC just before the outer push
 *     and just after the outer pop, then sleeping 20 us;
 *   - one nvtxRangePop with nothing pushed (unbalanced);
 *   - a start/end range "handoff" started in the main thread and ended in a new thread;
 *   - 2000 start/end ranges "relay" started in a new thread, which passes each id through a
 *     pipe, and ended by the main thread (the main thread waits 1 ms every 10, so the relay
 *     spans several of cutrace's writer passes);
 *   - nvtxMarkA("mark-a"), nvtxMarkW(L"wide-\u00e9\u4e2d") and an nvtxMarkEx "mark-ex" with
 *     category 3, ARGB color 0xff00ff00 and a u64 payload 42;
 *   - two marks longer than cutrace keeps of a message (512 bytes): nvtxMarkA of "long-" and 995
 *     'x' (1000 bytes), nvtxMarkW of L"wide-long-" and 300 U+00E9 (610 bytes in UTF-8);
 *   - a domain "cutrace-test" with the registered string "registered-phase", category 7 named
 *     "io", and one domain push/pop of the registered string in category 7 with an i32 payload -5;
 *   - 10000 push/pops named like PyTorch's emit_nvtx: "aten::add, seq = N, sizes = [[3, 4]]",
 *     N from 1000 to 10999.
 * stdout is one line that does not depend on tracing. With an argument, the measured outer
 * times are written there, one "TID T_BEFORE_PUSH T_AFTER_POP" line per outer range. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

enum { THREADS = 4, ROUNDS = 20, NAMES = 10000, RELAYS = 2000 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct worker {
    pthread_t th;
    int index;
    unsigned tid;
    uint64_t before[ROUNDS], after[ROUNDS];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    w->tid = (unsigned)syscall(SYS_gettid);
    char name[16];
    snprintf(name, sizeof name, "nvtx-%d", w->index);
    nvtxNameOsThreadA(w->tid, name);
    for (int r = 0; r < ROUNDS; r++) {
        w->before[r] = now_ns();
        nvtxRangePushA("outer");
        nvtxRangePushA("middle");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
        nvtxRangePop();
        w->after[r] = now_ns();
        struct timespec gap = {0, 20000}; /* rounds 20 us apart: each is told from the next */
        nanosleep(&gap, NULL);
    }
    return NULL;
}

static void *end_handoff(void *arg)
{
    nvtxRangeEnd(*(nvtxRangeId_t *)arg);
    return NULL;
}

static void *relay_starts(void *arg)
{
    int fd = *(int *)arg;
    for (int i = 0; i < RELAYS; i++) {
        nvtxRangeId_t id = nvtxRangeStartA("relay");
        if (write(fd, &id, sizeof id) != sizeof id)
            return NULL;
    }
    return NULL;
}

/* Ends in this thread the ranges relay_starts starts in another; 0 when all came through. */
static int relay(void)
{
    int fds[2];
    pthread_t t;
    if (pipe(fds) != 0 || pthread_create(&t, NULL, relay_starts, &fds[1]) != 0)
        return -1;
    int n = 0;
    nvtxRangeId_t id;
    while (n < RELAYS && read(fds[0], &id, sizeof id) == sizeof id) {
        nvtxRangeEnd(id);
        if (++n % 10 == 0) {
            struct timespec gap = {0, 1000000};
            nanosleep(&gap, NULL);
        }
    }
    pthread_join(t, NULL);
    close(fds[0]);
    close(fds[1]);
    return n == RELAYS ? 0 : -1;
}

static nvtxEventAttributes_t attributes(uint32_t category)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    return a;
}

int main(int argc, char **argv)
{
    nvtxRangeId_t early = nvtxRangeStartA("before-cuda");
    void *p;
    if (cudaMalloc(&p, 1024) != cudaSuccess || cudaFree(p) != cudaSuccess) {
        fprintf(stderr, "nvtx_ranges: CUDA failed\n");
        return 1;
    }
    nvtxRangeEnd(early);
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].index = i;
        pthread_create(&w[i].th, NULL, work, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(w[i].th, NULL);

    nvtxRangePop(); /* nothing pushed in this thread */

    nvtxRangeId_t id = nvtxRangeStartA("handoff");
    pthread_t t;
    pthread_create(&t, NULL, end_handoff, &id);
    pthread_join(t, NULL);

    if (relay() != 0) {
        fprintf(stderr, "nvtx_ranges: the relay failed\n");
        return 1;
    }
    nvtxMarkA("mark-a");
    nvtxMarkW(L"wide-\u00e9\u4e2d");
    nvtxEventAttributes_t a = attributes(3);
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00u;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = 42;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "mark-ex";
    nvtxMarkEx(&a);
    char longer[1001];
    memcpy(longer, "long-", 5);
    memset(longer + 5, 'x', 995);
    longer[1000] = 0;
    nvtxMarkA(longer);
    wchar_t wlonger[311];
    wcscpy(wlonger, L"wide-long-");
    wmemset(wlonger + 10, L'\u00e9', 300);
    wlonger[310] = 0;
    nvtxMarkW(wlonger);

    nvtxDomainHandle_t d = nvtxDomainCreateA("cutrace-test");
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "registered-phase");
    nvtxDomainNameCategoryA(d, 7, "io");
    nvtxEventAttributes_t b = attributes(7);
    b.payloadType = NVTX_PAYLOAD_TYPE_INT32;
    b.payload.iValue = -5;
    b.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    b.message.registered = s;
    nvtxDomainRangePushEx(d, &b);
    nvtxDomainRangePop(d);
    nvtxDomainDestroy(d);

    char name[96];
    for (int i = 0; i < NAMES; i++) {
        snprintf(name, sizeof name, "aten::add, seq = %d, sizes = [[3, 4]]", i + 1000);
        nvtxRangePushA(name);
        nvtxRangePop();
    }

    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        if (!f)
            return 2;
        for (int i = 0; i < THREADS; i++)
            for (int r = 0; r < ROUNDS; r++)
                fprintf(f, "%u %llu %llu\n", w[i].tid, (unsigned long long)w[i].before[r],
                        (unsigned long long)w[i].after[r]);
        fclose(f);
    }
    printf("nvtx_ranges: threads=%d rounds=%d names=%d\n", THREADS, ROUNDS, NAMES);
    return 0;
}
