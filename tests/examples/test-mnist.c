/* PyTorch's MNIST examples fed by torchvision's FakeData in place of MNIST (example.py), each
 * with a DataLoader of one worker (num_workers=1, pinned) that makes every 1x28x28 sample a PIL
 * image and back into a tensor in Python, 64 or 128 per batch, while the GPU's step is
 * microseconds of small kernels. An expert sees the training loop wait for that one worker at
 * `for batch_idx, (data, ...) in enumerate(train_loader)`: the loader first, the main thread
 * waiting for the DataLoader there, the cause the samples of its worker justify. */
#include "ex.h"

#include <string.h>

/* Runs example name, whose output ends its test with done; the loader must lead, the main
 * thread waiting for it at the example's loop. Returns the summary (the lead in *lead), or NULL
 * after a message. */
static tj *fed_by_one_worker(const char *name, const char *sizes, const char *const args[],
                             const char *done, const tj **lead)
{
    ctt_proc p;
    char dir[4096];
    if (ex_run(&p, dir, name, sizes, args, NULL))
        return NULL;
    int ended = strstr(p.out, done) != NULL;
    ctt_proc_free(&p);
    if (!ended) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected \"%s\" in its output", name, done);
        return NULL;
    }
    tj *s = ex_verdict(dir, lead);
    if (s && (strcmp(tj_str(*lead, "id"), "dataloader-starvation") ||
              ex_share_naming(*lead, NULL, NULL, "waiting for the DataLoader", NULL) < 0.5 ||
              !strstr(tj_str(*lead, "host_activity.0.site"), "main.py:"))) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected dataloader-starvation first, the main thread "
                    "waiting for the DataLoader at main.py; found %s: %s", name,
                    tj_str(*lead, "id"), tj_str(*lead, "message"));
        tj_free(s);
        return NULL;
    }
    if (s && ex_loader_cause_fits(*lead, 1)) {
        tj_free(s);
        return NULL;
    }
    return s;
}

/* mnist: a convnet (two convolutions, Adadelta) */
TEST_IMPL(examples_mnist)
{
    const char *args[] = {"--epochs", "1", "--batch-size", "64", "--test-batch-size", "320", NULL};
    const tj *d;
    tj *s = fed_by_one_worker("mnist", "960", args, "Test set: Average loss: ", &d);
    ASSERT(s);
    tj_free(s);
    return 0;
}

/* vae: a fully connected variational autoencoder (Adam) whose loop reads the loss with .item()
 * every step (`train_loss += loss.item()`), a synchronization: it costs little, the GPU's step
 * being done by the time the host reads the loss; no [high] finding, owed at most the time it
 * blocked (ex_bounds). */
TEST_IMPL(examples_vae)
{
    const char *args[] = {"--epochs", "1", "--batch-size", "128", NULL};
    const tj *d;
    tj *s = fed_by_one_worker("vae", "1280", args, "====> Test set loss: ", &d);
    ASSERT(s);
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(!y || strcmp(tj_str(y, "severity"), "high"));
    tj_free(s);
    return 0;
}

/* mnist_rnn: an LSTM over the image's rows (cuDNN's RNN, Adadelta); it runs on the GPU only
 * with --accel. cuDNN asks each stream for its green context (cuStreamGetGreenCtx), which the
 * simulation lacked: CUDNN_STATUS_INTERNAL_ERROR at the LSTM's first forward. */
TEST_IMPL(examples_mnist_rnn)
{
    const char *args[] = {"--epochs", "1", "--accel", "--batch-size", "64", "--test-batch-size",
                          "320", NULL};
    const tj *d;
    tj *s = fed_by_one_worker("mnist_rnn", "960", args, "Test set: Average loss: ", &d);
    ASSERT(s);
    tj_free(s);
    return 0;
}
