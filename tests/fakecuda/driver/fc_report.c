/* FAKECUDA_CUDART_REPORT=FILE: at cuInit, append which libcudart.so the process has mapped, so
 * a test can prove whether a program ran on NVIDIA's runtime or on the simulated one (both
 * have the same soname; only the search path decides). One line per mapped libcudart.so*:
 *
 *     PID REALPATH BUILD-ID
 *
 * REALPATH is the mapped file with every symbolic link resolved, BUILD-ID its
 * NT_GNU_BUILD_ID note in hex ("-" if it has none). Processes may share the file (one write per
 * line, O_APPEND). */
#define _GNU_SOURCE
#include "fc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The build id from the object's PT_NOTE segments, as hex into out. */
static void fc_build_id(const struct dl_phdr_info *info, char *out, size_t cap)
{
    snprintf(out, cap, "-");
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *n;
            const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
                desc + n->n_descsz <= end && 2 * n->n_descsz < cap) {
                for (unsigned k = 0; k < n->n_descsz; k++)
                    snprintf(out + 2 * k, cap - 2 * k, "%02x", desc[k]);
                return;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
}

static int fc_report_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libcudart.so", 12) != 0)
        return 0;
    char real[PATH_MAX], id[128], line[PATH_MAX + 200];
    if (!realpath(info->dlpi_name, real))
        snprintf(real, sizeof real, "%s", info->dlpi_name);
    fc_build_id(info, id, sizeof id);
    int n = snprintf(line, sizeof line, "%d %s %s\n", (int)getpid(), real, id);
    if (write(*(int *)arg, line, (size_t)n) != n)
        fc_fatal("FAKECUDA_CUDART_REPORT: writing failed: %s", strerror(errno));
    return 0;
}

void fc_report_cudart(void)
{
    const char *path = getenv("FAKECUDA_CUDART_REPORT");
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        fc_fatal("FAKECUDA_CUDART_REPORT: cannot open \"%s\" for appending: %s", path,
                 strerror(errno));
    int saved = errno;
    dl_iterate_phdr(fc_report_one, &fd);
    close(fd);
    errno = saved;
}
