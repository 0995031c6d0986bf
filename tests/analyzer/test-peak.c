/* The Copies table's "% of peak" on a real trace: train_loop on a simulated H100 whose host link
 * (PCIe 5.0 x16, from a sysfs tree made here, as the tracer reads it) is in the trace's DEVICE
 * record. The analyzer derives the link's peak, 16 lanes x 3.938 GB/s = 63.008 GB/s, and shows
 * each host copy's bandwidth as a share of it; pageable copies are re-costed at it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_helpers.h"

/* SYSFS/devices/pci0000:00/0000:00:01.0/BUSID (the card, under its upstream port) with both
 * links' maximum speed and width, and SYSFS/bus/pci/devices/BUSID pointing at it. */
static int make_sysfs(const char *sysfs, const char *busid)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "set -e; s='%s'; b='%s'; port=\"$s/devices/pci0000:00/0000:00:01.0\"; "
             "mkdir -p \"$port/$b\" \"$s/bus/pci/devices\"; "
             "ln -s \"$port/$b\" \"$s/bus/pci/devices/$b\"; "
             "for d in \"$port\" \"$port/$b\"; do echo '32.0 GT/s PCIe' > \"$d/max_link_speed\"; "
             "echo 16 > \"$d/max_link_width\"; done",
             sysfs, busid);
    char *argv[] = {"sh", "-c", cmd, NULL};
    ctt_proc p;
    int rc = ctt_run(&p, argv, NULL, 30);
    rc = rc == 0 && p.exited && p.code == 0 ? 0 : -1;
    ctt_proc_free(&p);
    return rc;
}

TEST_IMPL(workload_copy_peak_from_device_record)
{
    char sysfs[4096], env_sys[4200], dir[4096], *out;
    snprintf(sysfs, sizeof sysfs, "%s/sys", ctt_tmpdir());
    ASSERT_INT(make_sysfs(sysfs, "0000:18:00.0"), ==, 0); /* the simulated H100's bus id */
    snprintf(env_sys, sizeof env_sys, "CUTRACE_SYSFS=%s", sysfs);
    char *env[] = {"FAKECUDA_DEVICES=h100", env_sys, NULL};
    ASSERT(an_trace_workload(dir, "peak", "train_loop --iters 5 --loader-ms 0", env, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *dev = tj_path(s, "processes.0.devices.0");
    ASSERT(dev);
    ASSERT_STR(tj_str(dev, "name"), "NVIDIA H100 80GB HBM3");
    ASSERT_NEAR(tj_num(dev, "link_peak_gbps"), 63.008, 0.001);
    /* memory: 2619 MHz x 2 x 5120 bits */
    ASSERT_NEAR(tj_num(dev, "memory_peak_gbps"), 3352.32, 0.01);
    /* every host copy row has a % of peak, and it is its GB/s over 63.008 */
    int rows = 0;
    const tj *copies = tj_get(s, "copies");
    for (size_t i = 0; i < copies->n; i++) {
        const tj *c = copies->v[i];
        const char *op = tj_str(c, "op");
        if (strcmp(op, "H2D") && strcmp(op, "D2H"))
            continue;
        const tj *pk = tj_get(c, "peak_pct");
        ASSERT(pk && pk->type == TJ_NUM);
        double gbps = tj_num(c, "gbps");
        ASSERT(gbps > 0);
        ASSERT_NEAR(tj_num(c, "peak_pct"), 100.0 * gbps / 63.008, 0.01);
        ASSERT_NEAR(tj_num(c, "peak_gbps"), 63.008, 0.001); /* what the report draws it against */
        ASSERT(tj_num(c, "peak_pct") <= 100.0);
        rows++;
    }
    ASSERT_INT(rows, >=, 2); /* the batches (H2D) and the losses (D2H), both pageable */
    const tj *h2d = tj_find(copies, "op", "H2D");
    ASSERT(h2d);
    ASSERT_STR(tj_str(h2d, "host_kind"), "pageable");
    /* no pinned copy measured: pageable copies re-costed at the link's peak */
    const tj *d = an_diag(s, "pageable-memcpy");
    ASSERT(d);
    ASSERT_NEAR(tj_num(d, "evidence.pinned_gbps"), 63.008, 0.01);
    /* the 5 batches; the 24 KiB weights copy and the 5 4-byte losses are under 256 KiB: they
     * cost their latency, pinned or not */
    ASSERT_INT(tj_num(d, "evidence.copies"), ==, 5);
    tj_free(s);
    /* the text table shows the same percentage */
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "% of peak");
    ASSERT_CONTAINS(p.out, "63.01");
    ctt_proc_free(&p);
    return 0;
}
