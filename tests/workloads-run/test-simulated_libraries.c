#include <stdlib.h>

#include "wl_run.h"

/* Every workload, run the way the suites run it, binds to the simulated runtime and driver, not
 * to NVIDIA's libcudart.so.13 (on the default library path here), which would end every run in
 * error 801 and test nothing. The dynamic loader's own report (LD_TRACE_LOADED_OBJECTS) names
 * the file each dependency resolved to. */
TEST_IMPL(workloads_use_simulated_libraries)
{
    static const struct {
        const char *prog, *lib;
    } uses[] = {
        {"train_loop", "libcudart.so.13"}, {"threads", "libcudart.so.13"},
        {"fork_exec", "libcudart.so.13"},  {"dies", "libcudart.so.13"},
        {"vram_peak", "libcudart.so.13"},  {"driver_api", "libcuda.so.1"},
    };
    char fake_dir[4096];
    ctt_path(fake_dir, "tests/fakecuda");
    for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
        const char *env[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
        ctt_proc p;
        double ms;
        ASSERT_INT(wl_run(&p, uses[i].prog, NULL, env, &ms), ==, 0);
        char want[8192];
        snprintf(want, sizeof want, "%s => %s/%s ", uses[i].lib, fake_dir, uses[i].lib);
        if (!strstr(p.out, want)) {
            ctt_fail_at(__FILE__, __LINE__,
                            "%s: expected %s to resolve to the simulation (%s/%s); the loader "
                            "reported:\n%s", uses[i].prog, uses[i].lib, fake_dir, uses[i].lib,
                            p.out);
            return 1;
        }
        ctt_proc_free(&p);
    }
    return 0;
}
