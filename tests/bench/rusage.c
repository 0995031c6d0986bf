/* rusage: runs a command and reports its resource use, for the benchmark driver.
 *
 *   rusage REPORT_FILE COMMAND [ARGS...]
 *
 * Writes "maxrss_kb=K user_s=U sys_s=S wall_s=W" to REPORT_FILE and exits with COMMAND's status
 * (128+N if it died of signal N). Why not measure from the driver (Python) directly: a child's
 * peak RSS (ru_maxrss) includes what it had before exec, i.e. its forking parent's memory; this
 * program is small, so the peak it reports is the command's own. And the elapsed time from fork
 * to the child's end: Python's subprocess, waiting with a timeout, polls with sleeps of up to
 * 50 ms, which rounded a 0.48 s run up to 0.51 s (every figure of half a second was off by up
 * to a tenth). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: rusage REPORT_FILE COMMAND [ARGS...]\n", stderr);
        return 2;
    }
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rusage: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "rusage: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("rusage: wait4");
            return 127;
        }
    double wall = now_s() - t0;
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "maxrss_kb=%ld user_s=%ld.%06ld sys_s=%ld.%06ld wall_s=%.6f\n",
                      ru.ru_maxrss, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
                      (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec, wall) < 0 ||
        fclose(f) != 0) {
        fprintf(stderr, "rusage: cannot write the report to %s\n", argv[1]);
        return 127;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
