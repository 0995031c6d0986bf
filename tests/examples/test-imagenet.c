/* PyTorch's imagenet example (`main.py -a resnet18 --dummy`: FakeData, 3x224x224 PIL images made
 * into tensors by transforms.ToTensor) with its loading in the main process (`-j 0`): an expert
 * reading it sees each batch of 32 images generated and converted on the training thread while
 * the GPU waits, the GPU's step a small part of it. The verdict: the loader first; its fix more
 * DataLoader workers where the samples show a free core, and, where every core was busy (two
 * CPU hogs on a 2-core machine), CPU-bound loading with the lines that burn the CPU (the
 * transforms, the collate, FakeData) and no more workers. */
#include "ex.h"

#include <string.h>

/* batches of training (and 2 of validation): enough that the loop's loading outweighs the run's
 * fixed costs (the model's set-up, two checkpoints of 45 MB) on an idle machine */
#define BATCHES 12
#define SIZES "384,64" /* FAKE_SIZE: BATCHES of 32, then 2 */

TEST_IMPL(examples_imagenet_no_workers)
{
    const char *args[] = {"-a", "resnet18", "--dummy", "-b", "32", "-j", "0", "--epochs", "1",
                          "-p", "1", NULL};
    ctt_proc p;
    char dir[4096];
    if (ex_run(&p, dir, "imagenet", SIZES, args, NULL))
        return 1;
    /* the program's own clock: the training loop's time waiting for its batches */
    double data_s = ex_sum_after(p.out, "Epoch: [0]", "Data");
    ASSERT(data_s > 0);
    const tj *d = NULL;
    tj *s = ex_verdict(dir, &d);
    ASSERT(s);
    ASSERT_STR(tj_str(d, "id"), "dataloader-starvation");
    ASSERT_STR(tj_str(d, "severity"), "high");
    /* the gaps hold the loading the program measured, less the GPU's tail of each step that ran
     * into it (and the validation's loading besides) */
    ASSERT(tj_num(d, "evidence.gap_ns") >= data_s * 1e9 - BATCHES * tj_num(d, "evidence.gpu_step_ns"));
    /* why, as the samples of the run tell it */
    ASSERT_INT(ex_loader_cause_fits(d, 0), ==, 0);
    const tj *c = tj_get(d, "cause");
    if (tj_len(c, "causes") == 1 && !strcmp(tj_str(c, "causes.0"), "cpu-bound"))
        ASSERT(ex_share_naming(d, "to_tensor|collate|FakeData|fakedata|transforms") >= 0.5);
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
