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

/* The program's own time of batch n of the meter whose lines begin with prefix (its "Time", from
 * 1; fewer than 10 batches), or -1. */
static double step_time(const char *out, const char *prefix, int n)
{
    char want[64];
    snprintf(want, sizeof want, "%s%d/", prefix, n);
    const char *l = strstr(out, want), *t = l ? strstr(l, "Time ") : NULL;
    return t ? strtod(t + 5, NULL) : -1;
}

/* Runs imagenet with cudnn.benchmark on (args its own); the autotuning must show in the program's
 * own clock (the first batch of the meter prefix, "Test: [" or "Epoch: [0][", takes 4 times the
 * second or more) and in the verdict: no synchronization finding first nor [high], the host
 * computing in the convolutions, in cuDNN, for half the lead's sampled time or more. */
static int autotuned(const char *const args[], const char *meter)
{
    const char *env[] = {"EX_CUDNN_BENCHMARK=1", NULL};
    ctt_proc p;
    char dir[4096];
    if (ex_run(&p, dir, "imagenet", "64", args, env))
        return 1;
    double first = step_time(p.out, meter, 1), second = step_time(p.out, meter, 2);
    ctt_proc_free(&p);
    ASSERT(first > 0 && second > 0);
    ASSERT(first > 4 * second);
    const tj *d = NULL;
    tj *s = ex_verdict(dir, &d);
    ASSERT(s);
    ASSERT(strcmp(tj_str(d, "id"), "excessive-sync"));
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(!y || strcmp(tj_str(y, "severity"), "high"));
    ASSERT_STR(tj_str(d, "host_activity.0.state"), "running");
    double named = ex_share_naming(d, NULL, NULL, "_conv_forward|conv2d|convolution|cudnn", NULL);
    if (named < 0.5) {
        ctt_fail_at(__FILE__, __LINE__, "expected the convolutions' autotuning named for half the "
                    "samples of %s or more, found %.2f; first: %s", tj_str(d, "id"), named,
                    tj_str(d, "host_activity.0.site"));
        tj_free(s);
        return 1;
    }
    tj_free(s);
    return 0;
}

TEST_IMPL(examples_imagenet_cudnn_benchmark)
{
    const char *args[] = {"-a", "resnet18", "--dummy", "-b", "32", "-j", "0", "-e", "-p", "1",
                          NULL};
    return autotuned(args, "Test: [");
}

/* Training: the backward convolutions are autotuned too, on autograd's thread (no Python
 * frames there: cuDNN's native frames are what tell) */
TEST_IMPL(examples_imagenet_cudnn_benchmark_training)
{
    const char *args[] = {"-a", "resnet18", "--dummy", "-b", "32", "-j", "0", "--epochs", "1",
                          "-p", "1", NULL};
    return autotuned(args, "Epoch: [0][");
}
