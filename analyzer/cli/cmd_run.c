/* `cutrace run [options] -- CMD ARGS...`: runs CMD with libcutrace preloaded, forwards the
 * signals a job scheduler sends to it, returns its exit status (or dies of its signal), and
 * says where the traces are.
 *
 * libcutrace is found next to this binary ($BINDIR/../lib/libcutrace.so, the build and install
 * layout), or at CUTRACE_LIB. Options become the environment libcutrace reads (CUTRACE_OUTPUT,
 * CUTRACE_STACKS, CUTRACE_GPU_TIMING, CUTRACE_LIBCUDA, CUTRACE_BUFFER_MB, CUTRACE_CAPTURE_RANGE,
 * CUTRACE_DELAY, CUTRACE_DURATION, CUTRACE_ON_FULL), so children and
 * exec'd programs of CMD are traced the same way; NVTX_INJECTION64_PATH names libcutrace as
 * the program's NVTX tool unless the user set it. CUTRACE_RUN, a token of this run, goes into
 * each trace's header (its tracer options, "run=TOKEN"): the traces counted at the end are
 * those of this run, not those other runs wrote into the same directory meanwhile. While CMD
 * runs, this process holds a perf event of its own (cta_hold_perf_hooks). */
#define _GNU_SOURCE
#include "cta_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cttrace.h"

static const char *const cta_run_usage =
    "usage: cutrace run [OPTIONS] -- COMMAND [ARGS...]\n"
    "  Runs COMMAND (and every process it starts) with the CUDA tracer preloaded, then prints\n"
    "  where the traces are. Exit status and signals are COMMAND's own. libcutrace is also\n"
    "  COMMAND's NVTX tool (NVTX ranges are recorded) unless NVTX_INJECTION64_PATH is set.\n"
    "options:\n"
    "  -o, --output DIR     directory for the traces (created if missing; default\n"
    "                       ./cutrace-traces). %h host, %p pid, %j slurm job id, %r rank, %% %.\n"
    "                       Each traced process writes DIR/HOST-PID.cutrace.\n"
    "  --stacks MODE        call stacks: none, default (allocations, copies and\n"
    "                       synchronizations), all (every traced call)\n"
    "  --gpu-timing MODE    GPU start/end of kernels, copies and sets from CUDA events:\n"
    "                       all (default), off, or N to time 1 operation in N\n"
    "  --libcuda PATH       the real CUDA driver (default: found like the system would)\n"
    "  --buffer-mb N        memory budget for trace buffers, all threads together (default 512)\n"
    "  --on-full MODE       when a thread records faster than the trace is written and its\n"
    "                       buffer fills: drop (default; the records lost are counted) or block\n"
    "                       (the thread waits for the writer: nothing lost, the program slowed)\n"
    "  --capture-range R    record only inside windows: cudaProfilerApi (from each\n"
    "                       cudaProfilerStart/cuProfilerStart to the next stop), or\n"
    "                       nvtx:NAME[@DOMAIN] (each outermost NVTX range NAME, of DOMAIN or\n"
    "                       the default domain). Allocations and frees are recorded throughout\n"
    "  --delay SEC          start recording SEC seconds after the process starts (then the\n"
    "                       capture range applies)\n"
    "  --duration SEC       stop recording SEC seconds after recording began\n"
    "                       (without cutrace run: CUTRACE_CAPTURE_RANGE, CUTRACE_DELAY and\n"
    "                       CUTRACE_DURATION in the environment of an LD_PRELOAD run)\n"
    "  -q, --quiet          do not print where the traces are\n"
    "  -h, --help           this text\n";

static pid_t cta_child;

/* --delay / --duration: a decimal number of seconds, >= 0 (> 0 if positive). */
/* The kernel turns its perf hooks on context switches on when a thread's first perf event of
 * the whole system opens (a static key flipped, then an RCU grace period waited for: 5 to 15 ms
 * on these machines) and off a second after the last one closes. Each traced process opens one at
 * its first CUDA call (its thread sampler, ctp_perf.c), and paid that on the program's own time:
 * a tenth of a second-long training loop's tracing cost. An event held here, opened while CMD
 * starts, keeps the hooks on for the run. It never counts (created disabled); where perf_event is
 * not permitted it fails, and each process finds that out as before. */
static int cta_hold_perf_hooks(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int cta_valid_seconds(const char *s, int positive)
{
    char *end;
    double v = strtod(s, &end);
    return end != s && !*end && v == v && v <= 1e9 && (positive ? v > 0 : v >= 0);
}

/* --capture-range: cudaProfilerApi, or nvtx:NAME[@DOMAIN] (NAME and DOMAIN non-empty, at most
 * 512 bytes: the tracer compares the first 512 bytes of a message). */
static int cta_valid_range(const char *s)
{
    if (!strcmp(s, "cudaProfilerApi"))
        return 1;
    if (strncmp(s, "nvtx:", 5) != 0)
        return 0;
    const char *at = strrchr(s + 5, '@');
    size_t name = at ? (size_t)(at - s - 5) : strlen(s + 5);
    return name > 0 && name <= 512 && (!at || (at[1] && strlen(at + 1) <= 512));
}

/* Forwards a signal sent to cutrace itself (kill, a scheduler) to the command. Terminal
 * signals (SI_KERNEL) already reach the command through its process group. */
static void cta_forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (cta_child > 0 && (!si || si->si_code != SI_KERNEL))
        kill(cta_child, sig);
}

static int cta_set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "cutrace run: error: cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

/* libcutrace.so: CUTRACE_LIB, else next to this executable. */
static int cta_find_lib(char *out, size_t cap)
{
    const char *env = getenv("CUTRACE_LIB");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return -1;
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (!slash)
            return -1;
        *slash = 0;
        if ((size_t)snprintf(out, cap, "%s/../lib/libcutrace.so", exe) >= cap)
            return -1;
    }
    char real[PATH_MAX];
    if (!realpath(out, real) || access(real, R_OK) != 0)
        return -1;
    snprintf(out, cap, "%s", real);
    return 0;
}

static int cta_valid_mode(const char *v, const char *const *modes, int numeric)
{
    for (; *modes; modes++)
        if (!strcmp(v, *modes))
            return 1;
    if (numeric && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        return !*end && n > 0;
    }
    return 0;
}

/* The longest directory the tracer takes (its CUTRACE_OUTPUT, expanded): room is left in
 * PATH_MAX for "/HOST-PID-N.cutrace". */
#define CTA_OUTDIR_MAX (PATH_MAX - 65)

/* Whether the traces can go to outdir (absolute, %-patterns unexpanded), checked before the
 * command runs so that a run does not end with "no trace written" for a reason known in
 * advance: its name fits, each of its names too, and it is a directory that may be written, or
 * the nearest one above it that exists is (the tracer makes the rest; with a pattern, the
 * directories above its first %). Nothing is created. 0, or -1 after a message naming the
 * directory and the problem. */
static int cta_check_outdir(const char *outdir)
{
    size_t len = strlen(outdir);
    if (len > CTA_OUTDIR_MAX) {
        fprintf(stderr, "cutrace run: error: output directory %.60s... is %zu characters long: "
                "expected at most %d (PATH_MAX %d, less room for the trace file's name)\n",
                outdir, len, CTA_OUTDIR_MAX, PATH_MAX);
        return -1;
    }
    for (const char *c = outdir; *c;) {
        size_t n = strcspn(c, "/");
        if (n > NAME_MAX) {
            fprintf(stderr, "cutrace run: error: output directory %s: the name %.40s... in it is "
                    "%zu characters long: expected at most %d (NAME_MAX)\n", outdir, c, n,
                    NAME_MAX);
            return -1;
        }
        c += n + (c[n] == '/');
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", outdir);
    char *pct = strchr(dir, '%');
    if (pct) {
        *pct = 0;
        *strrchr(dir, '/') = 0; /* absolute: there is a '/' before it */
    }
    struct stat st;
    int rc;
    while ((rc = stat(dir[0] ? dir : "/", &st)) != 0 && errno == ENOENT) {
        char *up = strrchr(dir, '/');
        if (!up)
            break;
        *up = 0;
    }
    const char *at = dir[0] ? dir : "/";
    const char *problem = rc != 0 ? strerror(errno) : !S_ISDIR(st.st_mode) ? "not a directory"
                          : access(at, W_OK | X_OK) != 0 ? strerror(errno) : NULL;
    if (!problem)
        return 0;
    if (!strcmp(at, outdir))
        fprintf(stderr, "cutrace run: error: output directory %s: %s: expected a directory this "
                "user may write\n", outdir, problem);
    else
        fprintf(stderr, "cutrace run: error: output directory %s cannot be made: %s: %s, "
                "expected a directory this user may write\n", outdir, at, problem);
    return -1;
}

static void cta_run_quiet(void *ctx, const char *path, const char *msg)
{
    (void)ctx, (void)path, (void)msg;
}

/* Whether the trace at path is this run's: its header's tracer options hold "run=TOKEN". */
static int cta_trace_of_run(const char *path, const char *token)
{
    ct_reader_opts o = {.warn = cta_run_quiet, .defer_spans = 1};
    ct_reader *r;
    char err[256];
    if (ct_reader_open(&r, &path, 1, &o, err, sizeof err) != 0)
        return 0;
    const char *opts = ct_reader_header(r, 0)->tracer_options;
    size_t len = strlen(token);
    int ours = 0;
    for (const char *p = opts; p && (p = strstr(p, "run=")); p += 4)
        if ((p == opts || p[-1] == ' ') && !strncmp(p + 4, token, len) &&
            (p[4 + len] == ' ' || !p[4 + len]))
            ours = 1;
    ct_reader_close(r);
    return ours;
}

/* Counts the .cutrace files in dir modified at or after `since` that this run wrote. */
static int cta_count_traces(const char *dir, time_t since, const char *token)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".cutrace"))
            continue;
        char path[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path &&
            stat(path, &st) == 0 && st.st_mtime >= since && cta_trace_of_run(path, token))
            n++;
    }
    closedir(d);
    return n;
}

int cta_cmd_run(int argc, char **argv)
{
    static const char *const stack_modes[] = {"none", "default", "all", NULL};
    static const char *const gpu_modes[] = {"all", "off", NULL};
    static const char *const full_modes[] = {"drop", "block", NULL};
    static const char *const no_words[] = {NULL};
    const char *out = "cutrace-traces", *stacks = NULL, *gpu = NULL, *libcuda = NULL,
               *buffer = NULL, *range = NULL, *delay = NULL, *duration = NULL, *full = NULL;
    int quiet = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(cta_run_usage, stdout);
            return CTA_EXIT_OK;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (a[0] != '-')
            break; /* the command, without "--" */
        if (!v)
            return cta_cli_usage_error("run", "option %s needs a value", a);
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            out = v;
        else if (!strcmp(a, "--stacks"))
            stacks = v;
        else if (!strcmp(a, "--gpu-timing"))
            gpu = v;
        else if (!strcmp(a, "--libcuda"))
            libcuda = v;
        else if (!strcmp(a, "--buffer-mb"))
            buffer = v;
        else if (!strcmp(a, "--capture-range"))
            range = v;
        else if (!strcmp(a, "--delay"))
            delay = v;
        else if (!strcmp(a, "--duration"))
            duration = v;
        else if (!strcmp(a, "--on-full"))
            full = v;
        else
            return cta_cli_usage_error("run", "unknown option '%s'", a);
        i++;
    }
    if (i >= argc)
        return cta_cli_usage_error("run", "no command given (cutrace run [OPTIONS] -- COMMAND)");
    if (stacks && !cta_valid_mode(stacks, stack_modes, 0))
        return cta_cli_usage_error("run", "--stacks: expected none, default or all, found '%s'",
                                  stacks);
    if (gpu && !cta_valid_mode(gpu, gpu_modes, 1))
        return cta_cli_usage_error("run", "--gpu-timing: expected all, off or a count N > 0, "
                                  "found '%s'", gpu);
    if (buffer && !cta_valid_mode(buffer, no_words, 1))
        return cta_cli_usage_error("run", "--buffer-mb: expected a number > 0, found '%s'", buffer);
    if (full && !cta_valid_mode(full, full_modes, 0))
        return cta_cli_usage_error("run", "--on-full: expected drop or block, found '%s'", full);
    if (range && !cta_valid_range(range))
        return cta_cli_usage_error("run", "--capture-range: expected cudaProfilerApi or "
                                  "nvtx:NAME[@DOMAIN], found '%s'", range);
    if (delay && !cta_valid_seconds(delay, 0))
        return cta_cli_usage_error("run", "--delay: expected seconds (a number >= 0), found '%s'",
                                  delay);
    if (duration && !cta_valid_seconds(duration, 1))
        return cta_cli_usage_error("run", "--duration: expected seconds (a number > 0), found "
                                  "'%s'", duration);

    char lib[PATH_MAX];
    if (cta_find_lib(lib, sizeof lib) != 0) {
        fprintf(stderr, "cutrace run: error: expected libcutrace.so next to the cutrace binary "
                "(../lib/) or at CUTRACE_LIB, found none\n");
        return CTA_EXIT_FAIL;
    }
    /* An absolute output directory, so processes that change directory write to the same. */
    char outdir[2 * PATH_MAX + 8]; /* a longer one is cut, still too long for the check */
    if (out[0] == '/') {
        snprintf(outdir, sizeof outdir, "%s", out);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            fprintf(stderr, "cutrace run: error: cannot read the current directory: %s\n",
                    strerror(errno));
            return CTA_EXIT_FAIL;
        }
        snprintf(outdir, sizeof outdir, "%s/%s", cwd, out);
    }
    if (cta_check_outdir(outdir) != 0)
        return CTA_EXIT_FAIL;
    const char *old = getenv("LD_PRELOAD");
    size_t plen = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(plen);
    if (!preload)
        return CTA_EXIT_FAIL;
    snprintf(preload, plen, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    if (cta_set_env("LD_PRELOAD", preload) || cta_set_env("CUTRACE_OUTPUT", outdir) ||
        (stacks && cta_set_env("CUTRACE_STACKS", stacks)) ||
        (gpu && cta_set_env("CUTRACE_GPU_TIMING", gpu)) ||
        (libcuda && cta_set_env("CUTRACE_LIBCUDA", libcuda)) ||
        (buffer && cta_set_env("CUTRACE_BUFFER_MB", buffer)) ||
        (range && cta_set_env("CUTRACE_CAPTURE_RANGE", range)) ||
        (delay && cta_set_env("CUTRACE_DELAY", delay)) ||
        (duration && cta_set_env("CUTRACE_DURATION", duration)) ||
        (full && cta_set_env("CUTRACE_ON_FULL", full)) ||
        /* libcutrace is also the program's NVTX tool, unless the user named another */
        (!getenv("NVTX_INJECTION64_PATH") && cta_set_env("NVTX_INJECTION64_PATH", lib)))
        return CTA_EXIT_FAIL;
    free(preload);
    /* unique among runs on any host sharing the directory: pid and the start's realtime ns */
    char token[64];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(token, sizeof token, "%ld.%lld.%ld", (long)getpid(), (long long)now.tv_sec,
             now.tv_nsec);
    if (cta_set_env("CUTRACE_RUN", token))
        return CTA_EXIT_FAIL;

    static const int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = cta_forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof fwd / sizeof fwd[0]; k++)
        sigaction(fwd[k], &sa, NULL);

    time_t started = time(NULL);
    fflush(NULL);
    /* A command that cannot be run is told once, by the child: the pipe (closed by a successful
     * exec) tells this process not to add that no trace was written. */
    int execfail[2];
    if (pipe2(execfail, O_CLOEXEC) != 0) {
        fprintf(stderr, "cutrace run: error: pipe: %s\n", strerror(errno));
        return CTA_EXIT_FAIL;
    }
    cta_child = fork();
    if (cta_child < 0) {
        fprintf(stderr, "cutrace run: error: fork: %s\n", strerror(errno));
        return CTA_EXIT_FAIL;
    }
    if (cta_child == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        signal(SIGUSR2, SIG_DFL);
        signal(SIGCONT, SIG_DFL);
        close(execfail[0]);
        execvp(argv[i], argv + i);
        int e = errno;
        fprintf(stderr, "cutrace run: error: cannot run %s: %s\n", argv[i], strerror(e));
        if (write(execfail[1], &e, sizeof e) != (ssize_t)sizeof e)
            e = 0; /* unsaid, the parent adds that no trace was written: true, if redundant */
        _exit(127);
    }
    close(execfail[1]);
    int exec_errno = 0;
    while (read(execfail[0], &exec_errno, sizeof exec_errno) < 0 && errno == EINTR)
        ;
    close(execfail[0]);
    int hooks = cta_hold_perf_hooks();
    int status = 0;
    while (waitpid(cta_child, &status, 0) < 0 && errno == EINTR)
        ;
    cta_child = 0;
    if (hooks >= 0)
        close(hooks);
    if (!quiet && !exec_errno) {
        if (strchr(outdir, '%')) {
            fprintf(stderr, "cutrace: traces in %s (one directory per expansion)\n", outdir);
        } else {
            int n = cta_count_traces(outdir, started, token);
            if (n > 0)
                fprintf(stderr, "cutrace: %d trace file%s in %s (cutrace summary %s)\n", n,
                        n == 1 ? "" : "s", outdir, outdir);
            else
                fprintf(stderr, "cutrace: no trace written in %s (the command made no CUDA "
                        "call, or could not be traced)\n", outdir);
        }
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        fflush(NULL);
        kill(getpid(), sig);
        return 128 + sig;
    }
    return WEXITSTATUS(status);
}
