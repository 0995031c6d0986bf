/* PyTorch's autograd device thread on the simulated driver (tests/pytorch/autograd_exit.py):
 * the detached thread that runs CUDA backward passes calls the runtime and the driver from its
 * own thread and outlives the interpreter's finalization, as it does on a GPU. */
#include "pt.h"

/* Untraced runs of a loop that leaves backward on autograd's thread and ends as the examples do
 * (an evaluation pass after training): every one exits 0 with the same output. Several runs,
 * because what could go wrong at exit is a race (a detached thread calling a driver that
 * answers differently once the process is exiting); 3 runs take 15 to 25 s. */
TEST_IMPL(pytorch_autograd_thread_exits)
{
    enum { RUNS = 3 };
    char first[4096] = "";
    for (int i = 0; i < RUNS; i++) {
        ctt_proc p;
        char dir[4096];
        if (pt_run(&p, dir, "autograd", 0, "autograd_exit.py", NULL, NULL))
            return 1;
        ASSERT_CONTAINS(p.out, "steps 4 eval 8\n");
        if (!i)
            snprintf(first, sizeof first, "%s", p.out);
        ASSERT_STR(p.out, first);
        ctt_proc_free(&p);
    }
    return 0;
}
