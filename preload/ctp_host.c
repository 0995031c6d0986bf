/* The host sampler (see ctp_host.h). */
#define _GNU_SOURCE
#include "ctp_host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ctp_clock.h"
#include "ctp_fds.h"
#include "ctp_maps.h"
#include "ctp_state.h"

#define CTP_HOST_PROCS 256     /* processes of the tree followed */
#define CTP_HOST_TASKS 1024    /* threads followed, over all of them */
/* Descriptors kept open between samples (a process's stat, io and task directory, a thread's
 * stat, schedstat and children): past this, files are opened for each read, so a tree of
 * thousands of threads costs more system calls, never the program's descriptors. */
#define CTP_HOST_KEPT_FDS 192
#define CTP_HOST_CMDLINE 512

typedef struct {
    uint32_t pid;              /* 0: a free slot */
    uint32_t ppid, relation;
    uint64_t start_ticks;      /* starttime: the same pid with another is another process */
    unsigned seen;             /* the sample that last read it */
    int announced;             /* its PROC record is in the current file */
    int fd_stat, fd_io, fd_task;
    int io_unknown;
} ctp_hproc;

typedef struct {
    uint32_t tid;              /* 0: a free slot */
    uint16_t proc;
    unsigned seen;
    int fd_stat, fd_sched, fd_children;
} ctp_htask;

static ctp_hproc ctp_hprocs[CTP_HOST_PROCS];
static ctp_htask ctp_htasks[CTP_HOST_TASKS];
static unsigned ctp_hgen;
static int ctp_hfds;            /* descriptors kept */
static uint64_t ctp_hnext;      /* when the next sample is due */
static int ctp_hno_children;    /* the kernel has no /proc/PID/task/TID/children */
static uint64_t ctp_hroot_code; /* the traced process's startcode and executable: a child */
static dev_t ctp_hroot_dev;     /* with both is forked without exec */
static ino_t ctp_hroot_ino;
static uint64_t ctp_hns_per_tick;
/* the machine's files: /proc/stat, meminfo, vmstat, pressure/{cpu,io,memory} */
static int ctp_hfd_stat = -1, ctp_hfd_mem = -1, ctp_hfd_vm = -1, ctp_hfd_psi[3] = {-1, -1, -1};
static char ctp_hbuf[1u << 17]; /* one file's text (/proc/stat grows with CPUs and IRQs) */

/* ---- reading /proc ---- */

static void ctp_hclose(int *fd)
{
    if (*fd >= 0) {
        ctp_fd_drop(*fd);
        ctp_hfds--;
    }
    *fd = -1;
}

static int ctp_hopen(int *fd, const char *path, int flags)
{
    if (*fd >= 0)
        return *fd;
    int f = ctp_fd_open(path, flags);
    if (f >= 0 && ctp_hfds < CTP_HOST_KEPT_FDS) {
        *fd = f;
        ctp_hfds++;
    }
    return f;
}

/* The file at path into ctp_hbuf, NUL-terminated, through *fd (kept open when the budget
 * allows); its length, or -1 (unreadable: gone, not allowed, absent). */
static ssize_t ctp_hread(int *fd, const char *path)
{
    int f = ctp_hopen(fd, path, 0);
    if (f < 0)
        return -1;
    ssize_t n = pread(f, ctp_hbuf, sizeof ctp_hbuf - 1, 0);
    if (f != *fd)
        ctp_fd_drop(f);
    else if (n < 0)
        ctp_hclose(fd); /* a dead process's file stays dead */
    if (n >= 0)
        ctp_hbuf[n] = 0;
    return n;
}

/* A file read once (no descriptor kept). */
static ssize_t ctp_hread_once(const char *path)
{
    int fd = -1, saved = ctp_hfds;
    ctp_hfds = CTP_HOST_KEPT_FDS; /* forces open-read-close */
    ssize_t n = ctp_hread(&fd, path);
    ctp_hfds = saved;
    return n;
}

/* The unsigned number at *s (a leading '-' reads as 0), *s moved past it and its blanks. */
static uint64_t ctp_hnum(const char **s)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    int neg = *p == '-';
    p += neg;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (uint64_t)(*p++ - '0');
    *s = p;
    return neg ? 0 : v;
}

/* The number after "key" at the start of a line of text; found = 0 if there is none. */
static uint64_t ctp_hkey(const char *text, const char *key, int *found)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, kl)) {
            const char *v = p + kl;
            while (*v == ':' || *v == ' ' || *v == '\t')
                v++;
            return ctp_hnum(&v);
        }
    *found = 0;
    return 0;
}

int ctp_host_parse_stat(const char *buf, ctp_hstat *st)
{
    const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open || close[1] != ' ')
        return -1;
    size_t len = (size_t)(close - open - 1);
    if (len >= sizeof st->comm)
        len = sizeof st->comm - 1;
    memcpy(st->comm, open + 1, len);
    st->comm[len] = 0;
    st->state = close[2];
    const char *p = close + 3;
    for (int i = HS_PPID; i <= HS_STARTCODE; i++)
        st->f[i] = ctp_hnum(&p);
    return 0;
}

static uint64_t ctp_hticks_ns(uint64_t ticks) { return ticks * ctp_hns_per_tick; }

/* The numeric entries of a directory (pids, tids) into ids, at most max of them; how many it
 * has (more than max: the rest left out). */
static size_t ctp_hlist(int dir, uint32_t *ids, size_t max)
{
    static char dents[8192];
    size_t n = 0;
    long len;
    lseek(dir, 0, SEEK_SET);
    while ((len = syscall(SYS_getdents64, dir, dents, sizeof dents)) > 0)
        for (long off = 0; off < len;) {
            struct dirent64 *d = (struct dirent64 *)(dents + off);
            off += d->d_reclen;
            const char *nm = d->d_name;
            uint64_t id = ctp_hnum(&nm);
            if (id && !*nm && id <= UINT32_MAX) {
                if (n < max)
                    ids[n] = (uint32_t)id;
                n++;
            }
        }
    return n;
}

/* ---- the tables ---- */

static void ctp_hproc_free(ctp_hproc *p)
{
    ctp_hclose(&p->fd_stat);
    ctp_hclose(&p->fd_io);
    ctp_hclose(&p->fd_task);
    p->pid = 0;
}

static void ctp_htask_free(ctp_htask *t)
{
    ctp_hclose(&t->fd_stat);
    ctp_hclose(&t->fd_sched);
    ctp_hclose(&t->fd_children);
    t->tid = 0;
}

static int ctp_hproc_find(uint32_t pid)
{
    if (!pid)
        return -1; /* the free slots' (and the parent of init and kthreadd) */
    for (int i = 0; i < CTP_HOST_PROCS; i++)
        if (ctp_hprocs[i].pid == pid)
            return i;
    return -1;
}

static int ctp_hproc_add(uint32_t pid)
{
    for (int i = 0; i < CTP_HOST_PROCS; i++)
        if (!ctp_hprocs[i].pid) {
            ctp_hproc *p = &ctp_hprocs[i];
            memset(p, 0, sizeof *p);
            p->pid = pid;
            p->fd_stat = p->fd_io = p->fd_task = -1;
            return i;
        }
    return -1;
}

/* The thread's entry, looked for from *hint on (a directory lists threads in the same order
 * from one sample to the next, so the search is usually one step). */
static ctp_htask *ctp_htask_of(uint32_t tid, int proc, int *hint)
{
    for (int k = 0; k < CTP_HOST_TASKS; k++) {
        int i = (*hint + k) % CTP_HOST_TASKS;
        if (ctp_htasks[i].tid == tid && ctp_htasks[i].proc == proc) {
            *hint = i + 1;
            return &ctp_htasks[i];
        }
    }
    for (int i = 0; i < CTP_HOST_TASKS; i++)
        if (!ctp_htasks[i].tid) {
            ctp_htask *t = &ctp_htasks[i];
            t->tid = tid;
            t->proc = (uint16_t)proc;
            t->fd_stat = t->fd_sched = t->fd_children = -1;
            *hint = i + 1;
            return t;
        }
    return NULL;
}

/* ---- one sample ---- */

typedef struct {
    int queue[CTP_HOST_PROCS];
    int n;
    uint64_t now, boot_minus_mono;
    ctp_host_put_fn put;
    ct_rec machine; /* the machine's record, its CPU counters read at the round's stamp */
} ctp_hsample;

/* pid found as a child of a process of the tree: queued once per sample; -1 if the table has
 * no room for it (left out). */
static int ctp_hchild(ctp_hsample *s, uint32_t pid)
{
    int i = ctp_hproc_find(pid);
    if (i < 0)
        i = ctp_hproc_add(pid);
    if (i < 0)
        return -1;
    if (ctp_hprocs[i].seen != ctp_hgen && s->n < CTP_HOST_PROCS) {
        ctp_hprocs[i].seen = ctp_hgen;
        s->queue[s->n++] = i;
    }
    return 0;
}

/* How a newly seen process relates to the traced one (FORMAT.md 4.11). */
static uint32_t ctp_hrelation(uint32_t pid, const ctp_hstat *st)
{
    uint32_t root = ctp_hprocs[0].pid;
    if (pid == root)
        return CT_PROC_SELF;
    if (st->f[HS_PPID] != root)
        return CT_PROC_DESCENDANT;
    char path[64];
    struct stat exe;
    snprintf(path, sizeof path, "/proc/%u/exe", pid);
    if (st->f[HS_STARTCODE] == ctp_hroot_code && stat(path, &exe) == 0 &&
        exe.st_dev == ctp_hroot_dev && exe.st_ino == ctp_hroot_ino)
        return CT_PROC_FORKED;
    return CT_PROC_CHILD;
}

static void ctp_hannounce(ctp_hsample *s, ctp_hproc *p, const ctp_hstat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/cmdline", p->pid);
    ssize_t n = ctp_hread_once(path);
    uint32_t cmdline = 0;
    if (n > 0) {
        if (n > CTP_HOST_CMDLINE)
            n = CTP_HOST_CMDLINE;
        while (n > 0 && ctp_hbuf[n - 1] == 0)
            n--;
        for (ssize_t i = 0; i < n; i++)
            if (!ctp_hbuf[i])
                ctp_hbuf[i] = ' ';
        cmdline = ctp_intern(ctp_hbuf, (size_t)n);
    }
    ct_rec r = {.type = CT_REC_PROC, .ts = s->now};
    uint64_t start = ctp_hticks_ns(st->f[HS_START]);
    r.u.proc = (ct_rec_proc){p->pid, p->ppid, ctp_hprocs[0].pid, p->relation,
                             start > s->boot_minus_mono ? start - s->boot_minus_mono : 0,
                             ctp_intern(st->comm, strlen(st->comm)), cmdline};
    s->put(&r);
    p->announced = 1;
}

/* A process's threads: their states and scheduler times summed into *ps, each of the traced
 * process's threads recorded, the children of each queued. */
static void ctp_hthreads(ctp_hsample *s, int pi, ct_rec_proc_sample *ps)
{
    ctp_hproc *p = &ctp_hprocs[pi];
    char path[80];
    snprintf(path, sizeof path, "/proc/%u/task", p->pid);
    int dir = ctp_hopen(&p->fd_task, path, O_DIRECTORY);
    if (dir < 0)
        return;
    /* the directory's entries, then each thread's files (which reuse ctp_hbuf) */
    uint32_t tids[CTP_HOST_TASKS];
    size_t ntids = ctp_hlist(dir, tids, CTP_HOST_TASKS);
    if (ntids > CTP_HOST_TASKS) {
        ntids = CTP_HOST_TASKS;
        ps->flags |= CT_PS_PARTIAL;
    }
    if (dir != p->fd_task)
        ctp_fd_drop(dir);
    int hint = 0;
    for (size_t k = 0; k < ntids; k++) {
        ctp_htask *t = ctp_htask_of(tids[k], pi, &hint);
        if (!t) {
            ps->flags |= CT_PS_PARTIAL;
            continue;
        }
        ctp_hstat st;
        snprintf(path, sizeof path, "/proc/%u/task/%u/stat", p->pid, t->tid);
        if (ctp_hread(&t->fd_stat, path) < 0 || ctp_host_parse_stat(ctp_hbuf, &st) != 0)
            continue; /* exited meanwhile */
        t->seen = ctp_hgen;
        ps->threads++;
        ps->running += st.state == 'R';
        ps->blocked += st.state == 'D';
        uint64_t run = 0, wait = 0;
        int sched = 1;
        snprintf(path, sizeof path, "/proc/%u/task/%u/schedstat", p->pid, t->tid);
        if (ctp_hread(&t->fd_sched, path) > 0) {
            const char *q = ctp_hbuf;
            run = ctp_hnum(&q);
            wait = ctp_hnum(&q);
            ps->run_ns += run;
            ps->wait_ns += wait;
        } else {
            sched = 0;
            ps->flags |= CT_PS_NO_SCHED;
        }
        if (!ctp_hno_children) {
            snprintf(path, sizeof path, "/proc/%u/task/%u/children", p->pid, t->tid);
            if (ctp_hread(&t->fd_children, path) >= 0) {
                for (const char *q = ctp_hbuf; *q;) {
                    uint64_t c = ctp_hnum(&q);
                    if (!c)
                        break;
                    if (ctp_hchild(s, (uint32_t)c) != 0)
                        ps->flags |= CT_PS_PARTIAL;
                }
            } else if (errno == ENOENT && pi == 0 && t->tid == p->pid) {
                ctp_hno_children = 1; /* the kernel has no such files: scan /proc instead */
            }
        }
        if (pi == 0) {
            ct_rec r = {.type = CT_REC_PROC_SAMPLE, .ts = s->now};
            r.u.proc_sample = (ct_rec_proc_sample){
                .pid = p->pid, .tid = t->tid, .user_ns = ctp_hticks_ns(st.f[HS_UTIME]),
                .sys_ns = ctp_hticks_ns(st.f[HS_STIME]), .run_ns = run, .wait_ns = wait,
                .state = (uint8_t)st.state, .threads = 1, .running = st.state == 'R',
                .blocked = st.state == 'D', .majflt = st.f[HS_MAJFLT],
                .flags = CT_PS_NO_IO | (sched ? 0 : CT_PS_NO_SCHED)};
            s->put(&r);
        }
    }
}

/* Reads process queue[k]: its PROC record if new, its threads, its PROC_SAMPLE. */
static void ctp_hprocess(ctp_hsample *s, int pi)
{
    ctp_hproc *p = &ctp_hprocs[pi];
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/stat", p->pid);
    ctp_hstat st;
    if (ctp_hread(&p->fd_stat, path) < 0 || ctp_host_parse_stat(ctp_hbuf, &st) != 0) {
        p->seen = 0; /* gone (or a zombie's pid reused): dropped below */
        return;
    }
    if (p->start_ticks && p->start_ticks != st.f[HS_START]) {
        /* the pid was reused by another process: start over with it */
        uint32_t pid = p->pid;
        ctp_hproc_free(p);
        p->pid = pid;
        p->announced = 0;
        p->io_unknown = 0;
        if (ctp_hread(&p->fd_stat, path) < 0 || ctp_host_parse_stat(ctp_hbuf, &st) != 0) {
            p->seen = 0;
            return;
        }
    }
    if (!p->start_ticks) {
        p->start_ticks = st.f[HS_START];
        p->ppid = (uint32_t)st.f[HS_PPID];
        p->relation = ctp_hrelation(p->pid, &st);
    }
    if (!p->announced)
        ctp_hannounce(s, p, &st);
    ct_rec r = {.type = CT_REC_PROC_SAMPLE, .ts = s->now};
    ct_rec_proc_sample *ps = &r.u.proc_sample;
    *ps = (ct_rec_proc_sample){.pid = p->pid, .user_ns = ctp_hticks_ns(st.f[HS_UTIME]),
                               .sys_ns = ctp_hticks_ns(st.f[HS_STIME]),
                               .state = (uint8_t)st.state, .majflt = st.f[HS_MAJFLT],
                               .children_ns = ctp_hticks_ns(st.f[HS_CUTIME] + st.f[HS_CSTIME])};
    ctp_hthreads(s, pi, ps);
    snprintf(path, sizeof path, "/proc/%u/io", p->pid);
    if (p->io_unknown || ctp_hread(&p->fd_io, path) < 0) {
        p->io_unknown = p->io_unknown || errno == EACCES || errno == EPERM;
        ps->flags |= CT_PS_NO_IO;
    } else {
        int found = 1;
        ps->rchar = ctp_hkey(ctp_hbuf, "rchar", &found);
        ps->wchar = ctp_hkey(ctp_hbuf, "wchar", &found);
        ps->read_bytes = ctp_hkey(ctp_hbuf, "read_bytes", &found);
        ps->write_bytes = ctp_hkey(ctp_hbuf, "write_bytes", &found);
        if (!found) {
            ps->rchar = ps->wchar = ps->read_bytes = ps->write_bytes = 0;
            ps->flags |= CT_PS_NO_IO;
        }
    }
    s->put(&r);
}

/* Where the kernel has no children files: the processes whose parent is in the tree. */
static void ctp_hscan(ctp_hsample *s)
{
    int dir = ctp_fd_open("/proc", O_DIRECTORY);
    if (dir < 0)
        return;
    static uint32_t pids[1u << 15];
    size_t n = ctp_hlist(dir, pids, sizeof pids / sizeof pids[0]);
    for (size_t k = 0; k < n && k < sizeof pids / sizeof pids[0]; k++) {
        if (ctp_hproc_find(pids[k]) >= 0)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%u/stat", pids[k]);
        ctp_hstat st;
        if (ctp_hread_once(path) > 0 && ctp_host_parse_stat(ctp_hbuf, &st) == 0 &&
            ctp_hproc_find((uint32_t)st.f[HS_PPID]) >= 0)
            ctp_hchild(s, pids[k]);
    }
    ctp_fd_drop(dir);
}

/* The traced process's CPU limit: the tightest cgroup CPU bandwidth limit over its cgroup and
 * their ancestors (a container's, a batch job's), found once per file (a process seldom
 * changes cgroup), and the files that give the limiting cgroup's CPU time and throttled time.
 * Hierarchies are looked for where systemd mounts them, /sys/fs/cgroup (v2 there, or v1
 * controllers under it); elsewhere the limit is not found, as when none is set. */
static struct {
    int looked;
    uint32_t mcpu;             /* 0: none found */
    int v2;                    /* cpu.stat holds usage_usec and throttled_usec */
    char stat[192], usage[192]; /* the limiting cgroup's cpu.stat; v1 cpuacct.usage ("" unknown) */
    int fd_stat, fd_usage;
} ctp_hcg = {.fd_stat = -1, .fd_usage = -1};

/* The limit of the cgroup directory dir (v2 cpu.max "QUOTA PERIOD" or "max PERIOD"; v1
 * cpu.cfs_quota_us, -1 for none, over cpu.cfs_period_us) in thousandths of a CPU, 0 none. */
static uint64_t ctp_hcg_limit(const char *dir, int v2)
{
    char path[256];
    snprintf(path, sizeof path, v2 ? "%s/cpu.max" : "%s/cpu.cfs_quota_us", dir);
    if (ctp_hread_once(path) <= 0 || ctp_hbuf[0] < '0' || ctp_hbuf[0] > '9')
        return 0; /* "max", "-1", absent */
    const char *q = ctp_hbuf;
    uint64_t quota = ctp_hnum(&q), period = 0;
    if (v2) {
        period = ctp_hnum(&q);
    } else {
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (ctp_hread_once(path) > 0)
            q = ctp_hbuf, period = ctp_hnum(&q);
    }
    return period ? quota * 1000 / period : 0;
}

/* Looks for the limit from the cgroup at mount + path up to mount. */
static void ctp_hcg_walk(const char *mount, const char *path, int v2, const char *acct_mount)
{
    char dir[192];
    if (snprintf(dir, sizeof dir, "%s%s", mount, strcmp(path, "/") ? path : "") >= (int)sizeof dir)
        return;
    size_t root = strlen(mount);
    for (;;) {
        uint64_t m = ctp_hcg_limit(dir, v2);
        if (m && (!ctp_hcg.mcpu || m < ctp_hcg.mcpu)) {
            ctp_hcg.mcpu = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
            ctp_hcg.v2 = v2;
            if (snprintf(ctp_hcg.stat, sizeof ctp_hcg.stat, "%s/cpu.stat", dir) >=
                (int)sizeof ctp_hcg.stat)
                ctp_hcg.stat[0] = 0;
            if (!acct_mount || snprintf(ctp_hcg.usage, sizeof ctp_hcg.usage, "%s%s/cpuacct.usage",
                                        acct_mount, dir + root) >= (int)sizeof ctp_hcg.usage)
                ctp_hcg.usage[0] = 0;
        }
        char *slash = strrchr(dir + root, '/');
        if (!slash)
            break;
        *slash = 0;
    }
}

static void ctp_hcg_find(void)
{
    ctp_hclose(&ctp_hcg.fd_stat);
    ctp_hclose(&ctp_hcg.fd_usage);
    ctp_hcg.looked = 1;
    ctp_hcg.mcpu = 0;
    char text[4096];
    if (ctp_hread_once("/proc/self/cgroup") <= 0)
        return;
    size_t tl = strnlen(ctp_hbuf, sizeof text - 1);
    memcpy(text, ctp_hbuf, tl);
    text[tl] = 0;
    /* lines "ID:CONTROLLERS:PATH"; v1's cpu controller may share a hierarchy with cpuacct */
    const char *v2 = NULL, *cpu = NULL, *acct = NULL;
    char cpu_ctrls[64] = "";
    char *save;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *ctrls = c1 + 1, *path = c2 + 1;
        if (!*ctrls && line[0] == '0')
            v2 = path;
        for (const char *t = ctrls; *t;) {
            size_t l = strcspn(t, ",");
            if (l == 3 && !strncmp(t, "cpu", 3)) {
                cpu = path;
                snprintf(cpu_ctrls, sizeof cpu_ctrls, "%s", ctrls);
            }
            if (l == 7 && !strncmp(t, "cpuacct", 7))
                acct = path;
            t += l + (t[l] == ',');
        }
    }
    char mount[96];
    if (cpu) {
        snprintf(mount, sizeof mount, "/sys/fs/cgroup/%s", cpu_ctrls);
        /* cpuacct counts the same processes only in the same cgroup */
        const char *am = strstr(cpu_ctrls, "cpuacct") ? mount
                         : acct && !strcmp(acct, cpu) ? "/sys/fs/cgroup/cpuacct" : NULL;
        ctp_hcg_walk(mount, cpu, 0, am);
    } else if (v2) {
        ctp_hcg_walk("/sys/fs/cgroup", v2, 1, NULL);
    }
}

/* The limiting cgroup's CPU time and throttled time into h (flagged when unreadable). */
static void ctp_hcg_read(ct_rec_host_sample *h)
{
    if (!ctp_hcg.looked)
        ctp_hcg_find();
    if (!(h->quota_mcpu = ctp_hcg.mcpu))
        return;
    int found = 1;
    if (ctp_hcg.stat[0] && ctp_hread(&ctp_hcg.fd_stat, ctp_hcg.stat) > 0) {
        if (ctp_hcg.v2) {
            h->cg_cpu_ns = ctp_hkey(ctp_hbuf, "usage_usec", &found) * 1000;
            h->throttled_ns = ctp_hkey(ctp_hbuf, "throttled_usec", &found) * 1000;
        } else {
            h->throttled_ns = ctp_hkey(ctp_hbuf, "throttled_time", &found);
            const char *q = ctp_hbuf;
            found = ctp_hcg.usage[0] && ctp_hread(&ctp_hcg.fd_usage, ctp_hcg.usage) > 0;
            h->cg_cpu_ns = found ? ctp_hnum(&q) : 0;
        }
    } else {
        found = 0;
    }
    if (!found)
        h->flags |= CT_HS_NO_CG_USAGE;
}

/* The round's stamp and the machine's CPU counters, read first and together: the analyzer
 * divides what the counters gained between two rounds by the time between their stamps, so a
 * stamp must be the time of the reading. The processes are read after (a scan of /proc, tens of
 * ms with the writer descheduled beside CPU-bound work, once made the machine busy on 3.6 of its
 * 2 CPUs); a reading the writer was descheduled in (more than 1 ms) is taken again, twice at
 * most. */
#define CTP_HSTAMP_NS 1000000ull
static void ctp_hcpu(ctp_hsample *s)
{
    int got = 0;
    for (int tries = 0; tries < 3; tries++) {
        s->now = ctp_now();
        got = ctp_hread(&ctp_hfd_stat, "/proc/stat") > 0;
        if (!got || ctp_now() - s->now < CTP_HSTAMP_NS)
            break;
    }
    s->machine = (ct_rec){.type = CT_REC_HOST_SAMPLE, .ts = s->now};
    ct_rec_host_sample *h = &s->machine.u.host_sample;
    if (got) {
        const char *p = ctp_hbuf + 3; /* "cpu  user nice system idle iowait irq softirq steal" */
        uint64_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = ctp_hnum(&p);
        h->busy_ns = ctp_hticks_ns(v[0] + v[1] + v[2] + v[5] + v[6]);
        h->idle_ns = ctp_hticks_ns(v[3]);
        h->iowait_ns = ctp_hticks_ns(v[4]);
        h->steal_ns = ctp_hticks_ns(v[7]);
        /* the traced process's CPUs (a job's cpuset): the lines "cpuN ..." of those in its mask */
        static unsigned long mask[8192 / (8 * sizeof(unsigned long))];
        size_t msize = sizeof mask;
        int masked = sched_getaffinity((pid_t)ctp_hprocs[0].pid, msize, (cpu_set_t *)mask) == 0;
        for (const char *q = strstr(ctp_hbuf, "\ncpu"); q; q = strstr(q + 1, "\ncpu")) {
            if (q[4] < '0' || q[4] > '9')
                continue;
            h->cpus++;
            const char *c = q + 4;
            uint64_t cpu = ctp_hnum(&c);
            if (!masked || cpu >= 8 * msize || !CPU_ISSET_S(cpu, msize, (cpu_set_t *)mask))
                continue;
            for (int i = 0; i < 8; i++)
                v[i] = ctp_hnum(&c);
            h->job_cpus++;
            h->job_busy_ns += ctp_hticks_ns(v[0] + v[1] + v[2] + v[5] + v[6]);
            h->job_iowait_ns += ctp_hticks_ns(v[4]);
        }
        int found = 1;
        h->running = (uint32_t)ctp_hkey(ctp_hbuf, "procs_running", &found);
        h->blocked = (uint32_t)ctp_hkey(ctp_hbuf, "procs_blocked", &found);
    }
}

/* The rest of the machine's record (memory, paging, cgroup, pressure), and the record, after
 * the round's processes: the analyzer closes a round at it. */
static void ctp_hmachine(ctp_hsample *s)
{
    ct_rec_host_sample *h = &s->machine.u.host_sample;
    int found = 1;
    if (ctp_hread(&ctp_hfd_mem, "/proc/meminfo") > 0) {
        h->mem_total = ctp_hkey(ctp_hbuf, "MemTotal", &found) * 1024;
        h->mem_available = ctp_hkey(ctp_hbuf, "MemAvailable", &found) * 1024;
    }
    else
        found = 0;
    if (!found)
        h->flags |= CT_HS_NO_MEM;
    found = 1;
    if (ctp_hread(&ctp_hfd_vm, "/proc/vmstat") > 0) {
        h->swap_in = ctp_hkey(ctp_hbuf, "pswpin", &found);
        h->swap_out = ctp_hkey(ctp_hbuf, "pswpout", &found);
        h->majflt = ctp_hkey(ctp_hbuf, "pgmajfault", &found);
    } else {
        found = 0;
    }
    if (!found)
        h->flags |= CT_HS_NO_VM;
    ctp_hcg_read(h);
    static const char *const psi[3] = {"/proc/pressure/cpu", "/proc/pressure/io",
                                       "/proc/pressure/memory"};
    uint64_t *some[3] = {&h->psi_cpu_some_ns, &h->psi_io_some_ns, &h->psi_mem_some_ns};
    uint64_t *full[3] = {NULL, &h->psi_io_full_ns, &h->psi_mem_full_ns};
    for (int i = 0; i < 3; i++) {
        if (ctp_hread(&ctp_hfd_psi[i], psi[i]) <= 0) {
            h->flags |= CT_HS_NO_PSI;
            continue;
        }
        const char *t = strstr(ctp_hbuf, "total=");
        *some[i] = t ? (t += 6, ctp_hnum(&t) * 1000) : 0;
        t = strstr(ctp_hbuf, "full ");
        t = t ? strstr(t, "total=") : NULL;
        if (full[i] && t) {
            t += 6;
            *full[i] = ctp_hnum(&t) * 1000;
        }
    }
    s->put(&s->machine);
}

uint64_t ctp_host_wait(uint64_t now)
{
    if (!ctp_opt.host_ns)
        return UINT64_MAX;
    if (!ctp_hnext) /* the first a period after the trace began, as the writer's first flush */
        ctp_hnext = now + ctp_opt.host_ns;
    return ctp_hnext > now ? ctp_hnext - now : 0;
}

void ctp_host_sample(uint64_t now, int force, ctp_host_put_fn put)
{
    if (!ctp_opt.host_ns || (!force && now < ctp_hnext))
        return;
    ctp_hnext = now + ctp_opt.host_ns;
    if (!ctp_hns_per_tick) {
        long hz = sysconf(_SC_CLK_TCK);
        ctp_hns_per_tick = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
    }
    static ctp_hsample s;
    struct timespec boot, mono;
    clock_gettime(CLOCK_BOOTTIME, &boot);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    /* the clocks differ by the time the machine was suspended; read apart, by a few ns either way */
    int64_t d = (int64_t)(boot.tv_sec - mono.tv_sec) * 1000000000 + (boot.tv_nsec - mono.tv_nsec);
    s.boot_minus_mono = d > 0 ? (uint64_t)d : 0;
    /* The round's stamp, taken at its readings rather than at the flush's start (now): in the
     * final flush, after the rings are drained, or with the writer descheduled beside CPU-bound
     * work, now came well before them. One stamp for the round: its process and machine samples
     * read the same interval. */
    ctp_hcpu(&s);
    s.put = put;
    s.n = 0;
    if (++ctp_hgen == 0)
        ctp_hgen = 1;
    uint32_t self = (uint32_t)getpid();
    if (ctp_hprocs[0].pid != self) {
        ctp_hprocs[0] = (ctp_hproc){.pid = self, .fd_stat = -1, .fd_io = -1, .fd_task = -1};
        ctp_hno_children = ctp_opt.host_scan;
        char path[64];
        ctp_hstat st;
        snprintf(path, sizeof path, "/proc/%u/stat", self);
        struct stat exe;
        if (ctp_hread_once(path) > 0 && ctp_host_parse_stat(ctp_hbuf, &st) == 0)
            ctp_hroot_code = st.f[HS_STARTCODE];
        if (stat("/proc/self/exe", &exe) == 0) {
            ctp_hroot_dev = exe.st_dev;
            ctp_hroot_ino = exe.st_ino;
        }
    }
    ctp_hprocs[0].seen = ctp_hgen;
    s.queue[s.n++] = 0;
    for (int k = 0; k < s.n; k++) {
        ctp_hprocess(&s, s.queue[k]);
        if (k == s.n - 1 && ctp_hno_children) {
            int before = s.n;
            ctp_hscan(&s);
            if (s.n == before)
                break;
        }
    }
    ctp_hmachine(&s);
    for (int i = 1; i < CTP_HOST_PROCS; i++)
        if (ctp_hprocs[i].pid && ctp_hprocs[i].seen != ctp_hgen)
            ctp_hproc_free(&ctp_hprocs[i]);
    for (int i = 0; i < CTP_HOST_TASKS; i++)
        if (ctp_htasks[i].tid && (ctp_htasks[i].seen != ctp_hgen ||
                                  !ctp_hprocs[ctp_htasks[i].proc].pid))
            ctp_htask_free(&ctp_htasks[i]);
}

void ctp_host_fork_child(void)
{
    for (int i = 0; i < CTP_HOST_PROCS; i++)
        if (ctp_hprocs[i].pid)
            ctp_hproc_free(&ctp_hprocs[i]);
    for (int i = 0; i < CTP_HOST_TASKS; i++)
        if (ctp_htasks[i].tid)
            ctp_htask_free(&ctp_htasks[i]);
    ctp_hclose(&ctp_hfd_stat);
    ctp_hcg.looked = 0;
    ctp_hclose(&ctp_hfd_mem);
    ctp_hclose(&ctp_hfd_vm);
    for (int i = 0; i < 3; i++)
        ctp_hclose(&ctp_hfd_psi[i]);
    ctp_hnext = 0;
}

void ctp_host_new_file(void)
{
    ctp_hcg.looked = 0;
    for (int i = 0; i < CTP_HOST_PROCS; i++)
        ctp_hprocs[i].announced = 0;
}
