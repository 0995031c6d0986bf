/* perf_event user-stack sampling of the traced threads (see ctp_perf.h). */
#define _GNU_SOURCE
#include "ctp_perf.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <libunwind.h>

#include "ctp_fds.h"
#include "ctp_loader.h"
#include "ctp_stack.h"
#include "ctp_state.h"
#include "ctp_unwind.h"

/* The registers a DWARF unwind needs (the callee-saved ones, the stack and instruction pointers),
 * in the order a sample holds them (their bit order), with libunwind's numbers. */
static const struct {
    int perf, unw;
} ctp_pf_regs[] = {{PERF_REG_X86_BX, UNW_X86_64_RBX}, {PERF_REG_X86_BP, UNW_X86_64_RBP},
                   {PERF_REG_X86_SP, UNW_X86_64_RSP}, {PERF_REG_X86_IP, UNW_X86_64_RIP},
                   {PERF_REG_X86_R12, UNW_X86_64_R12}, {PERF_REG_X86_R13, UNW_X86_64_R13},
                   {PERF_REG_X86_R14, UNW_X86_64_R14}, {PERF_REG_X86_R15, UNW_X86_64_R15}};
#define CTP_PF_NREGS (sizeof ctp_pf_regs / sizeof ctp_pf_regs[0])
#define CTP_PF_SP 2
#define CTP_PF_IP 3

static size_t ctp_pf_page;
/* Reads outside the copied stack (the unwind tables of the loaded objects, read for each
 * instruction libunwind has not met: it caches what it learnt per instruction, and a sample's
 * innermost instruction is rarely one met) go through process_vm_readv on the process itself:
 * an object unloaded meanwhile, or an address made of garbage, is an error, never a fault in the
 * program. libunwind reads a word at a time (each byte of an FDE's instructions is a word's
 * read): ~230 system calls per sample of PyTorch's autograd thread, 0.5 ms, three quarters of
 * the sampler's time on the imagenet example. So what lies in a loaded object's read-only
 * segment (its code and unwind tables: unchanged while it stays loaded) is read a line at a time
 * into a cache kept across samples and emptied when an object is unloaded (dlpi_subs, checked
 * at each unwinding); anything else (the thread's live stack above the copy) is read each time. */
static pid_t ctp_pf_pid;
#define CTP_PF_LINE 256    /* a line never crosses a page */
#define CTP_PF_LINES 512   /* 128 KiB */
#define CTP_PF_RANGES 4096 /* read-only segments; past them, read each time */
static struct ctp_pf_line {
    uint64_t addr; /* its first byte's (0: empty) */
    unsigned char bytes[CTP_PF_LINE];
} ctp_pf_lines[CTP_PF_LINES];
static struct ctp_pf_range {
    uint64_t lo, hi;
} ctp_pf_ranges[CTP_PF_RANGES];
static unsigned ctp_pf_nranges;
static unsigned long long ctp_pf_adds, ctp_pf_subs; /* the loaded objects the ranges are of */

/* Under the loader's lock: the first object says whether any was loaded or unloaded since the
 * ranges were made (their counts; a loader without them: every time), the others' read-only
 * segments are noted when so. */
static int ctp_pf_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *walk = arg; /* 1 before the first object, 2 once the ranges are being made again */
    if (*walk == 1) {
        *walk = 0;
        int counted = size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs;
        if (counted && info->dlpi_adds == ctp_pf_adds && info->dlpi_subs == ctp_pf_subs)
            return 1;
        if (!counted || info->dlpi_subs != ctp_pf_subs)
            memset(ctp_pf_lines, 0, sizeof ctp_pf_lines);
        ctp_pf_adds = counted ? info->dlpi_adds : 0;
        ctp_pf_subs = counted ? info->dlpi_subs : 0;
        ctp_pf_nranges = 0;
        *walk = 2;
    }
    for (int i = 0; i < info->dlpi_phnum && ctp_pf_nranges < CTP_PF_RANGES; i++) {
        const ElfW(Phdr) *h = &info->dlpi_phdr[i];
        if (h->p_type == PT_LOAD && !(h->p_flags & PF_W))
            ctp_pf_ranges[ctp_pf_nranges++] = (struct ctp_pf_range){
                info->dlpi_addr + h->p_vaddr, info->dlpi_addr + h->p_vaddr + h->p_memsz};
    }
    return 0;
}

static int ctp_pf_range_cmp(const void *a, const void *b)
{
    const struct ctp_pf_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The ranges, made again if an object was loaded or unloaded (the lines emptied if unloaded). */
static void ctp_pf_objects(void)
{
    int walk = 1;
    ctp_loader_walk(ctp_pf_object, &walk);
    if (walk == 2)
        qsort(ctp_pf_ranges, ctp_pf_nranges, sizeof *ctp_pf_ranges, ctp_pf_range_cmp);
}

/* Whether [addr, addr + len) lies in a loaded object's read-only segment. */
static int ctp_pf_constant(uint64_t addr, size_t len)
{
    unsigned lo = 0, hi = ctp_pf_nranges;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (ctp_pf_ranges[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ctp_pf_nranges && ctp_pf_ranges[lo].lo <= addr && addr + len <= ctp_pf_ranges[lo].hi;
}

/* Reads len bytes at addr of this process; 0, or -1 if they are not mapped. */
static int ctp_pf_peek(uint64_t addr, void *out, size_t len)
{
    struct iovec local = {out, len}, remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(ctp_pf_pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* With stacks: the task clock, a sample every period of the thread's CPU time (its timer
 * interrupt costs the thread ~10 us on a virtual machine: 0.2% of a running thread at 5 ms);
 * without: a dummy event, only the switches (a Python thread's stack is read otherwise). */
static void ctp_pf_attr(struct perf_event_attr *a, int stacks)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = stacks ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_DUMMY;
    a->sample_type = PERF_SAMPLE_TIME;
    if (stacks) {
        a->sample_period = ctp_opt.thread_sample_ns;
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        for (size_t i = 0; i < CTP_PF_NREGS; i++)
            a->sample_regs_user |= 1ull << ctp_pf_regs[i].perf;
        a->sample_stack_user = CTP_PERF_STACK;
    }
    /* user mode only, as perf_event_paranoid 2 requires of an unprivileged process */
    a->exclude_kernel = a->exclude_hv = a->exclude_callchain_kernel = 1;
    a->context_switch = a->sample_id_all = 1;
    a->use_clockid = 1; /* its times on the tracer's clock */
    a->clockid = CLOCK_MONOTONIC;
    /* nobody polls the ring: wake no one until it is full */
    a->watermark = 1;
    a->wakeup_watermark = (uint32_t)(CTP_PERF_PAGES * ctp_pf_page);
}

/* Opens and maps an event on tid; 0, or the step that failed ("perf_event_open", "mmap") with
 * errno set. */
static const char *ctp_pf_open(ctp_perf *p, uint32_t tid, int stacks)
{
    if (!ctp_pf_page)
        ctp_pf_page = (size_t)sysconf(_SC_PAGESIZE);
    ctp_pf_pid = getpid(); /* this process's, a forked child's its own */
    struct perf_event_attr a;
    ctp_pf_attr(&a, stacks);
    p->fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    p->base = NULL;
    p->state = p->stack = 0;
    p->stack_at = p->slept_at = 0;
    p->fn_lo = p->fn_hi = 0;
    if (p->fd < 0)
        return "perf_event_open";
    ctp_fd_keep(p->fd);
    void *m = mmap(NULL, (CTP_PERF_PAGES + 1) * ctp_pf_page, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        ctp_fd_drop(p->fd);
        p->fd = -1;
        errno = e;
        return "mmap of its ring";
    }
    p->base = m;
    return NULL;
}

int ctp_perf_open(ctp_perf *p, uint32_t tid, int stacks)
{
    int saved = errno;
    int rc = ctp_pf_open(p, tid, stacks) ? -1 : 0;
    errno = saved;
    return rc;
}

void ctp_perf_close(ctp_perf *p)
{
    if (p->fd < 0)
        return;
    munmap(p->base, (CTP_PERF_PAGES + 1) * ctp_pf_page);
    ctp_fd_drop(p->fd);
    p->fd = -1;
}

int ctp_perf_probe(char *why, size_t len)
{
    int saved = errno;
    ctp_perf p;
    const char *step = ctp_pf_open(&p, (uint32_t)syscall(SYS_gettid), 1);
    if (!step) {
        ctp_perf_close(&p);
        errno = saved;
        return 1;
    }
    int e = errno;
    char para[16] = "?";
    int fd = ctp_fd_open("/proc/sys/kernel/perf_event_paranoid", 0);
    ssize_t n = fd >= 0 ? read(fd, para, sizeof para - 1) : -1;
    ctp_fd_drop(fd);
    para[n > 0 ? n : 1] = 0;
    para[strcspn(para, "\n")] = 0;
    /* one word (the tracer's options are words): the step, the error, the setting */
    snprintf(why, len, "%s:%s:perf_event_paranoid=%s", step[0] == 'm' ? "mmap" : step,
             strerrorname_np(e) ? strerrorname_np(e) : "error", para);
    errno = saved;
    return 0;
}

/* ---- the newest sample of a read, and its unwinding ------------------------------------- */

static struct {
    uint64_t time;
    uint64_t regs[CTP_PF_NREGS];
    uint64_t len;                          /* stack bytes copied from regs[CTP_PF_SP] up */
    unsigned char stack[CTP_PERF_STACK];
} ctp_pf_smp;

/* Anything else (the local unwinder's tables in libunwind's own writable data, which the remote
 * search reads; writable segments of the objects; the live stack above the copy: ~36 reads of a
 * word per sample of PyTorch's autograd thread) is read a page at a time, kept for one
 * unwinding only: it may change between samples. */
#define CTP_PF_HELD 8
#define CTP_PF_CHUNK 4096 /* never crosses a page */
static struct ctp_pf_held {
    uint64_t addr; /* 0: empty */
    unsigned char bytes[CTP_PF_CHUNK];
} ctp_pf_held[CTP_PF_HELD];
static unsigned ctp_pf_held_next;

static int ctp_pf_live(uint64_t addr, unw_word_t *val)
{
    uint64_t at = addr & ~(uint64_t)(CTP_PF_CHUNK - 1);
    if (addr - at + sizeof *val > CTP_PF_CHUNK)
        return ctp_pf_peek(addr, val, sizeof *val) ? -UNW_EINVAL : 0;
    struct ctp_pf_held *h = NULL;
    for (unsigned i = 0; i < CTP_PF_HELD && !h; i++)
        if (ctp_pf_held[i].addr == at)
            h = &ctp_pf_held[i];
    if (!h) {
        h = &ctp_pf_held[ctp_pf_held_next++ % CTP_PF_HELD];
        h->addr = 0;
        if (ctp_pf_peek(at, h->bytes, CTP_PF_CHUNK) != 0)
            return ctp_pf_peek(addr, val, sizeof *val) ? -UNW_EINVAL : 0;
        h->addr = at;
    }
    memcpy(val, h->bytes + (addr - at), sizeof *val);
    return 0;
}

static int ctp_pf_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    (void)as;
    (void)arg;
    uint64_t sp = ctp_pf_smp.regs[CTP_PF_SP];
    if (write)
        return -UNW_EINVAL;
    if (addr >= sp && addr - sp + sizeof *val <= ctp_pf_smp.len) {
        memcpy(val, ctp_pf_smp.stack + (addr - sp), sizeof *val);
        return 0;
    }
    uint64_t at = addr & ~(uint64_t)(CTP_PF_LINE - 1);
    if (addr - at + sizeof *val > CTP_PF_LINE || !ctp_pf_constant(at, CTP_PF_LINE))
        return ctp_pf_live(addr, val);
    struct ctp_pf_line *l = &ctp_pf_lines[(at / CTP_PF_LINE) % CTP_PF_LINES];
    if (l->addr != at) {
        l->addr = 0;
        if (ctp_pf_peek(at, l->bytes, CTP_PF_LINE) != 0)
            return -UNW_EINVAL;
        l->addr = at;
    }
    memcpy(val, l->bytes + (addr - at), sizeof *val);
    return 0;
}

static int ctp_pf_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
    (void)as;
    (void)arg;
    for (size_t i = 0; i < CTP_PF_NREGS && !write; i++)
        if (ctp_pf_regs[i].unw == reg) {
            *val = ctp_pf_smp.regs[i];
            return 0;
        }
    return -UNW_EBADREG;
}

static int ctp_pf_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;
}

static int ctp_pf_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int ctp_pf_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off, void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
    return -UNW_ENOINFO;
}

static unw_addr_space_t ctp_pf_as;
/* Instructions where samples were taken -> their function's start. */
#define CTP_PF_STARTS 1024
static struct ctp_pf_start {
    uint64_t ip, start, end; /* end: the function's (start, end 0: not known) */
} ctp_pf_starts[CTP_PF_STARTS];
/* The innermost function of the stack last unwound: [lo, hi), 0 0 if not known. */
static uint64_t ctp_pf_fn_lo, ctp_pf_fn_hi;

static int ctp_pf_unwind_at(uint64_t ips[CTP_STACK_DEPTH])
{
    if (!ctp_pf_as) {
        /* the process's own unwind tables, found as local unwinding finds them (its accessors
         * are set up by the first local unwinding) */
        unw_context_t uc;
        unw_cursor_t self;
        ctp_unwind_guard();
        if (unw_getcontext(&uc) < 0 || unw_init_local(&self, &uc) < 0)
            return 0;
        unw_accessors_t acc = *unw_get_accessors(unw_local_addr_space);
        if (!acc.find_proc_info)
            return 0;
        acc.access_mem = ctp_pf_access_mem;
        acc.access_reg = ctp_pf_access_reg;
        acc.access_fpreg = ctp_pf_access_fpreg;
        acc.resume = ctp_pf_resume;
        acc.get_proc_name = ctp_pf_proc_name;
        if (!(ctp_pf_as = unw_create_addr_space(&acc, 0)))
            return 0;
        unw_set_caching_policy(ctp_pf_as, UNW_CACHE_GLOBAL);
    }
    unw_cursor_t c;
    int n = 0;
    ctp_pf_objects();
    for (unsigned i = 0; i < CTP_PF_HELD; i++)
        ctp_pf_held[i].addr = 0;
    if (unw_init_remote(&c, ctp_pf_as, NULL) < 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
            break;
        if (!n) {
            /* its function's start, from a cache (the lookup walks the unwind tables) */
            struct ctp_pf_start *e = &ctp_pf_starts[(ip >> 2) % CTP_PF_STARTS];
            unw_proc_info_t pi;
            if (e->ip != ip) {
                int known = unw_get_proc_info(&c, &pi) == 0 && pi.start_ip && pi.end_ip > ip;
                *e = (struct ctp_pf_start){ip, known ? pi.start_ip : ip, known ? pi.end_ip : 0};
            }
            ctp_pf_fn_lo = e->end ? e->start : 0;
            ctp_pf_fn_hi = e->end;
            ip = e->start + 1; /* a stack's entries are return addresses, looked up at ip - 1 */
        }
        ips[n++] = ip;
    } while (n < CTP_STACK_DEPTH && unw_step(&c) > 0);
    return n;
}

/* The newest sample's stack, innermost first, interned; 0 if it cannot be unwound at all. The
 * innermost frame is named by its function's start (its instruction differs sample to sample:
 * one frame per function, not one per instruction, in the stack table). Unwinding looks up
 * unwind tables in the loaded objects (ctp_loader.h); interning takes the stack table's lock,
 * which a fork's handler takes first. */
static uint32_t ctp_pf_unwind(void)
{
    uint64_t ips[CTP_STACK_DEPTH], code_at[CTP_STACK_DEPTH] = {0};
    ctp_loader_enter();
    int n = ctp_pf_unwind_at(ips);
    ctp_loader_leave();
    return n ? ctp_stack_intern(0, ips, code_at, n) : 0;
}

/* ---- the ring ------------------------------------------------------------------------------ */

/* Copies len bytes at ring offset at (the data wraps) into out. */
static void ctp_pf_copy(const ctp_perf *p, uint64_t at, void *out, size_t len)
{
    const unsigned char *data = p->base + ctp_pf_page;
    uint64_t size = CTP_PERF_PAGES * ctp_pf_page, off = at % size;
    size_t first = len < size - off ? len : (size_t)(size - off);
    memcpy(out, data + off, first);
    memcpy((unsigned char *)out + first, data, len - first);
}

/* A sample (after its header: time, regs' ABI and values, stack size, bytes, dynamic size) into
 * ctp_pf_smp; 0, or -1 if it holds no user registers or stack. */
static int ctp_pf_take(const ctp_perf *p, uint64_t at, uint64_t size)
{
    uint64_t w[2 + CTP_PF_NREGS + 1];
    uint64_t need = 8 * (2 + CTP_PF_NREGS + 1);
    if (size < 8 + need)
        return -1;
    ctp_pf_copy(p, at + 8, w, sizeof w);
    if (w[1] == PERF_SAMPLE_REGS_ABI_NONE)
        return -1;
    uint64_t len = w[2 + CTP_PF_NREGS], dyn = 0;
    if (!len || len > CTP_PERF_STACK || size < 8 + need + len + 8)
        return -1;
    ctp_pf_copy(p, at + 8 + need + len, &dyn, 8);
    ctp_pf_smp.time = w[0];
    memcpy(ctp_pf_smp.regs, w + 2, sizeof ctp_pf_smp.regs);
    ctp_pf_smp.len = dyn < len ? dyn : len;
    ctp_pf_copy(p, at + 8 + need, ctp_pf_smp.stack, (size_t)ctp_pf_smp.len);
    return 0;
}

void ctp_perf_read(ctp_perf *p, int stack, ctp_perf_seen *r)
{
    memset(r, 0, sizeof *r);
    if (p->fd < 0)
        return;
    struct perf_event_mmap_page *m = (struct perf_event_mmap_page *)p->base;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
    uint64_t sample = UINT64_MAX;
    while (tail < head) {
        struct perf_event_header h;
        ctp_pf_copy(p, tail, &h, sizeof h);
        if (h.size < sizeof h || h.size > head - tail)
            break;
        if (h.type == PERF_RECORD_SWITCH) {
            r->ran = 1;
            int out = !!(h.misc & PERF_RECORD_MISC_SWITCH_OUT);
            int asleep = out && !(h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
            p->state = asleep ? 'S' : 'R';
            r->slept |= asleep;
            if (asleep && h.size >= sizeof h + 8)
                ctp_pf_copy(p, tail + sizeof h, &p->slept_at, 8); /* its sample_id: the time */
        } else if (h.type == PERF_RECORD_SAMPLE) {
            r->ran = 1;
            sample = tail;
        } else if (h.type == PERF_RECORD_LOST) {
            r->lost = 1;
            p->state = 0;
        }
        tail += h.size;
    }
    /* The newest sample is unwound when the stack had is from before a sleep since (it says
     * nothing of where the thread runs now), or is CTP_PERF_UNWIND_NS older than the sample, or
     * when the sample's instruction lies outside the innermost function of the stack had (the
     * thread went elsewhere: its old stack would stand for the new place up to 10 ms). */
    uint64_t w[3 + CTP_PF_IP] = {0}; /* time, the registers' ABI, the registers up to IP */
    if (stack && sample != UINT64_MAX)
        ctp_pf_copy(p, sample + sizeof(struct perf_event_header), w, sizeof w);
    uint64_t at = w[0], ip = w[1] != PERF_SAMPLE_REGS_ABI_NONE ? w[2 + CTP_PF_IP] : 0;
    int moved = ip && p->fn_hi && (ip < p->fn_lo || ip >= p->fn_hi);
    if (stack && sample != UINT64_MAX &&
        (p->stack_at <= p->slept_at || at >= p->stack_at + CTP_PERF_UNWIND_NS || moved)) {
        struct perf_event_header h;
        ctp_pf_copy(p, sample, &h, sizeof h);
        if (ctp_pf_take(p, sample, h.size) == 0)
            sample = 0;
    }
    __atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
    r->ran |= p->state == 'R';
    r->state = p->state;
    if (stack && sample == 0) {
        ctp_pf_fn_lo = ctp_pf_fn_hi = 0;
        p->stack = ctp_pf_unwind();
        p->stack_at = ctp_pf_smp.time;
        p->fn_lo = ctp_pf_fn_lo;
        p->fn_hi = ctp_pf_fn_hi;
    }
    /* Where it last ran, unless it went to sleep since: a thread preempted, or waiting for a
     * CPU on a busy machine (its task clock stopped, no new sample), is where it was. */
    if (stack && p->stack_at > p->slept_at)
        r->stack = p->stack;
}
