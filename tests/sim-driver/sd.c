#include "sd.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sd_env(const char *name, const char *value)
{
    setenv(name, value, 1);
}

int sd_init(void)
{
    CUcontext c;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(c) != CUDA_SUCCESS)
        return -1;
    return 0;
}

long long sd_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ll + t.tv_nsec;
}

double sd_elapsed_ns(CUevent a, CUevent b)
{
    float ms = -1;
    if (cuEventElapsedTime_v2(&ms, a, b) != CUDA_SUCCESS)
        return -1;
    return ms * 1e6;
}

CUfunction sd_kernel(const char *name, int nparams)
{
    char img[512];
    int n = snprintf(img, sizeof img, "fakecuda-module 1\nkernel %s", name);
    for (int i = 0; i < nparams; i++)
        n += snprintf(img + n, sizeof img - (size_t)n, " 8");
    snprintf(img + n, sizeof img - (size_t)n, "\n");
    CUmodule m;
    CUfunction f;
    if (cuModuleLoadData(&m, img) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS)
        return NULL;
    return f;
}

static void CUDA_CB sd_gate_wait(void *arg)
{
    sd_gate *g = arg;
    pthread_mutex_lock(&g->m);
    while (!g->open)
        pthread_cond_wait(&g->c, &g->m);
    pthread_mutex_unlock(&g->m);
}

int sd_gate_close(sd_gate *g, CUstream s)
{
    pthread_mutex_init(&g->m, NULL);
    pthread_cond_init(&g->c, NULL);
    g->open = 0;
    return cuLaunchHostFunc(s, sd_gate_wait, g) == CUDA_SUCCESS ? 0 : -1;
}

void sd_gate_open(sd_gate *g)
{
    pthread_mutex_lock(&g->m);
    g->open = 1;
    pthread_cond_broadcast(&g->c);
    pthread_mutex_unlock(&g->m);
}

int sd_buffer_stream_events(size_t n, CUdeviceptr *d, CUstream *s, CUevent *a, CUevent *b)
{
    CK(cuMemAlloc_v2(d, n));
    CK(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(a, 0));
    CK(cuEventCreate(b, 0));
    return 0;
}
