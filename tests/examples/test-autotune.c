/* PyTorch's imagenet example with cudnn.benchmark forced on from outside (example.py,
 * EX_CUDNN_BENCHMARK=1), evaluating (`-e`: the forward convolutions alone, which hold most of the
 * autotuning's time; training adds the backward's, on autograd's thread, and a checkpoint, for
 * twice the run): cuDNN times every algorithm of each convolution's first shape before the first
 * batch's convolutions run. An expert sees the first batch take seconds to the others' fraction
 * of one, the host computing in cuDNN's
 * autotuning under the convolutions while the GPU waits: start-up work, not the
 * synchronizations the autotuning makes to time its candidates. The verdict: no synchronization
 * finding leads or is [high], and where the host was names the convolutions. */
#include "ex.h"

#include <stdlib.h>
#include <string.h>

/* The program's own time of validation batch n (its "Time" meter, from 1; fewer than 10
 * batches), or -1. */
static double step_time(const char *out, int n)
{
    char want[64];
    snprintf(want, sizeof want, "Test: [%d/", n);
    const char *l = strstr(out, want), *t = l ? strstr(l, "Time ") : NULL;
    return t ? strtod(t + 5, NULL) : -1;
}

TEST_IMPL(examples_imagenet_cudnn_benchmark)
{
    const char *args[] = {"-a", "resnet18", "--dummy", "-b", "32", "-j", "0", "-e", "-p", "1",
                          NULL};
    const char *env[] = {"EX_CUDNN_BENCHMARK=1", NULL};
    ctt_proc p;
    char dir[4096];
    if (ex_run(&p, dir, "imagenet", "64", args, env))
        return 1;
    /* the autotuning happened: the first batch is the start-up, by the program's own clock */
    double first = step_time(p.out, 1), second = step_time(p.out, 2);
    ASSERT(first > 0 && second > 0);
    ASSERT(first > 4 * second);
    const tj *d = NULL;
    tj *s = ex_verdict(dir, &d);
    ASSERT(s);
    ASSERT(strcmp(tj_str(d, "id"), "excessive-sync"));
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(!y || strcmp(tj_str(y, "severity"), "high"));
    /* the host was computing in the convolutions, not blocked */
    ASSERT_STR(tj_str(d, "host_activity.0.state"), "running");
    ASSERT(ex_share_naming(d, "_conv_forward|conv2d|cudnn") >= 0.5);
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
