/* DEVICE records: train_loop on a simulated H100 and on an A100 has exactly one DEVICE record
 * with the figures of the simulation's device table (tests/fakecuda/driver/fc_devices.c). The
 * simulation has no sysfs, so the host link comes from a sysfs tree made here (CUTRACE_SYSFS)
 * the way Linux lays it out: the card under its upstream port, whose own maximum caps it. */
#include "tr.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *key, *name, *busid;
    uint32_t sms, cc_major, clock_khz, mem_clock_khz, bus_bits;
    uint64_t mem_bytes;
    uint32_t l2, smem_per_sm, pci_bus;
} dev_want;

/* SYSFS/devices/pci0000:00/0000:00:01.0/BUSID with the card's and the port's maximum link, and
 * SYSFS/bus/pci/devices/BUSID -> it. */
static int make_sysfs(const char *sysfs, const char *busid, const char *card_speed,
                      const char *card_width, const char *port_speed, const char *port_width)
{
    char port[4200], card[4400], links[4200], link[4400], cmd[9000];
    snprintf(port, sizeof port, "%s/devices/pci0000:00/0000:00:01.0", sysfs);
    snprintf(card, sizeof card, "%s/%s", port, busid);
    snprintf(links, sizeof links, "%s/bus/pci/devices", sysfs);
    snprintf(link, sizeof link, "%s/%s", links, busid);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s'", card, links);
    if (system(cmd) != 0 || symlink(card, link) != 0)
        return -1;
    return tr_put(card, "max_link_speed", card_speed) | tr_put(card, "max_link_width", card_width) |
           tr_put(port, "max_link_speed", port_speed) | tr_put(port, "max_link_width", port_width);
}

static int check(const dev_want *w, const char *port_speed, const char *port_width,
                 uint32_t gen, uint32_t width)
{
    char prog[4096], out[4096], sysfs[4096], env_dev[64], env_sys[4200];
    snprintf(out, sizeof out, "%s/%s-%s", ctt_tmpdir(), w->key, port_width);
    snprintf(sysfs, sizeof sysfs, "%s/sys-%s-%s", ctt_tmpdir(), w->key, port_width);
    /* The card's own maximum is what the device table says (H100 PCIe 5 x16, A100 PCIe 4 x16) */
    ASSERT_INT(make_sysfs(sysfs, w->busid, w->cc_major >= 9 ? "32.0 GT/s PCIe\n" : "16.0 GT/s PCIe\n",
                          "16\n", port_speed, port_width), ==, 0);
    snprintf(env_dev, sizeof env_dev, "FAKECUDA_DEVICES=%s", w->key);
    snprintf(env_sys, sizeof env_sys, "CUTRACE_SYSFS=%s", sysfs);
    char *env[] = {env_dev, env_sys, NULL};
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "2", "--loader-ms", "1",
                   NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_DEVICE, NULL), ==, 1);
    const ct_rec_device *d = NULL;
    const char *name = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_DEVICE) {
            d = &t.v[i].r.u.device;
            name = t.v[i].name;
        }
    ASSERT(d != NULL);
    ASSERT_UINT(d->device, ==, 0);
    ASSERT_STR(name ? name : "", w->name);
    int uuid_set = 0;
    for (int i = 0; i < 16; i++)
        uuid_set |= d->uuid[i];
    ASSERT(uuid_set);
    ASSERT_UINT(d->cc_major, ==, w->cc_major);
    ASSERT_UINT(d->cc_minor, ==, 0);
    ASSERT_UINT(d->sm_count, ==, w->sms);
    ASSERT_UINT(d->clock_khz, ==, w->clock_khz);
    ASSERT_UINT(d->mem_clock_khz, ==, w->mem_clock_khz);
    ASSERT_UINT(d->mem_bus_bits, ==, w->bus_bits);
    ASSERT_UINT(d->mem_bytes, ==, w->mem_bytes);
    ASSERT_UINT(d->l2_bytes, ==, w->l2);
    ASSERT_UINT(d->max_threads_per_sm, ==, 2048);
    ASSERT_UINT(d->regs_per_sm, ==, 65536);
    ASSERT_UINT(d->smem_per_sm, ==, w->smem_per_sm);
    ASSERT_UINT(d->warp_size, ==, 32);
    ASSERT_UINT(d->async_engines, ==, 3);
    ASSERT_UINT(d->concurrent_kernels, ==, 1);
    ASSERT_UINT(d->pci_domain, ==, 0);
    ASSERT_UINT(d->pci_bus, ==, w->pci_bus);
    ASSERT_UINT(d->pci_device, ==, 0);
    ASSERT_UINT(d->link_kind, ==, CT_LINK_PCIE);
    ASSERT_UINT(d->link_gen, ==, gen);
    ASSERT_UINT(d->link_width, ==, width);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(device_records)
{
    static const dev_want h100 = {"h100", "NVIDIA H100 80GB HBM3", "0000:18:00.0", 132, 9,
                                  1980000, 2619000, 5120, 85520809984ull, 52428800, 233472,
                                  0x18};
    static const dev_want a100 = {"a100", "NVIDIA A100-SXM4-80GB", "0000:07:00.0", 108, 8,
                                  1410000, 1593000, 5120, 85899345920ull, 41943040, 167936,
                                  0x07};
    /* A port at least as fast as the card: the card's link; a slower one: the port's. */
    return check(&h100, "32.0 GT/s PCIe\n", "16\n", 5, 16) ||
           check(&a100, "32.0 GT/s PCIe\n", "16\n", 4, 16) ||
           check(&a100, "8.0 GT/s PCIe\n", "8\n", 3, 8);
}

/* No sysfs entry for the card: the link is unknown (0), never guessed. */
TEST_IMPL(device_link_unknown_without_sysfs)
{
    char prog[4096], out[4096], env_sys[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(env_sys, sizeof env_sys, "CUTRACE_SYSFS=%s/nothing", ctt_tmpdir());
    char *env[] = {"FAKECUDA_DEVICES=h100", env_sys, NULL};
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "1", "--loader-ms", "1",
                   NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_DEVICE, NULL), ==, 1);
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_DEVICE) {
            ASSERT_UINT(t.v[i].r.u.device.sm_count, ==, 132);
            ASSERT_UINT(t.v[i].r.u.device.link_kind, ==, CT_LINK_UNKNOWN);
            ASSERT_UINT(t.v[i].r.u.device.link_gen, ==, 0);
            ASSERT_UINT(t.v[i].r.u.device.link_width, ==, 0);
        }
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
