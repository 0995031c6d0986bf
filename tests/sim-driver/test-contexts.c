/* Context stack, primary context state, context destruction, and a fork() child. */
#include "sd.h"

#include <sys/wait.h>
#include <unistd.h>

TEST_IMPL(contexts_and_primary_state)
{
    sd_env("FAKECUDA_DEVICES", "a100,t4");
    CK(cuInit(0));
    unsigned flags;
    int active;
    CK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    ASSERT_INT(active, ==, 0);
    CK(cuDevicePrimaryCtxSetFlags_v2(1, CU_CTX_SCHED_BLOCKING_SYNC));
    CUcontext p1, p1b, c0, cur;
    CK(cuDevicePrimaryCtxRetain(&p1, 1));
    CK(cuDevicePrimaryCtxRetain(&p1b, 1));
    ASSERT(p1 == p1b);
    CK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    ASSERT_INT(active, ==, 1);
    ASSERT_UINT(flags, ==, CU_CTX_SCHED_BLOCKING_SYNC);

    CK(cuCtxGetCurrent(&cur));
    ASSERT(cur == NULL);
    CUdeviceptr d;
    ASSERT_INT(cuMemAlloc_v2(&d, 16), ==, CUDA_ERROR_INVALID_CONTEXT);
    CK(cuCtxCreate_v4(&c0, NULL, 0, 0)); /* pushed */
    CK(cuCtxPushCurrent_v2(p1));
    CUdevice dev;
    CK(cuCtxGetDevice(&dev));
    ASSERT_INT(dev, ==, 1);
    CK(cuCtxPopCurrent_v2(&cur));
    ASSERT(cur == p1);
    CK(cuCtxGetDevice(&dev));
    ASSERT_INT(dev, ==, 0);
    CK(cuCtxGetDevice_v2(&dev, p1));
    ASSERT_INT(dev, ==, 1);
    unsigned long long id0, id1;
    CK(cuCtxGetId(c0, &id0));
    CK(cuCtxGetId(p1, &id1));
    ASSERT_UINT(id0, !=, id1);

    /* A destroyed context leaves the stack; its handle is refused afterwards. */
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamGetDevice(s, &dev));
    ASSERT_INT(dev, ==, 0);
    CK(cuCtxDestroy_v2(c0));
    CK(cuCtxGetCurrent(&cur));
    ASSERT(cur == NULL);
    ASSERT_INT(cuCtxPushCurrent_v2(c0), ==, CUDA_ERROR_INVALID_CONTEXT);
    ASSERT_INT(cuCtxDestroy_v2(p1), ==, CUDA_ERROR_INVALID_CONTEXT); /* primary */

    CK(cuDevicePrimaryCtxRelease_v2(1));
    CK(cuDevicePrimaryCtxRelease_v2(1));
    CK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    ASSERT_INT(active, ==, 0);
    ASSERT_INT(cuDevicePrimaryCtxRelease_v2(1), ==, CUDA_ERROR_INVALID_CONTEXT);

    /* A fork() child cannot use CUDA; the parent still can. */
    pid_t pid = fork();
    if (pid == 0) {
        int n;
        _exit(cuInit(0) == CUDA_ERROR_NOT_INITIALIZED &&
                      cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED
                  ? 0
                  : 1);
    }
    int status;
    ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
    ASSERT(WIFEXITED(status));
    ASSERT_INT(WEXITSTATUS(status), ==, 0);
    int n;
    CK(cuDeviceGetCount(&n));
    ASSERT_INT(n, ==, 2);
    return 0;
}
