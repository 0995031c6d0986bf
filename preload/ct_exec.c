/* The exec and _exit functions (see ct_exec.h). */
#define _GNU_SOURCE
#include "ct_exec.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CT_EXPORT __attribute__((visibility("default")))

/* The C library's definition of name (the next one after libcutrace), or NULL. */
static void *ct_libc(const char *name)
{
    int saved = errno;
    void *p = dlsym(RTLD_NEXT, name);
    errno = saved;
    return p;
}

#define CT_LIBC(name) ((__typeof__(&name))ct_libc(#name))
/* Ends the trace, then calls the C library's `name` with args (ENOSYS if there is none);
 * if that returns, traces on. */
#define CT_EXEC(name, ...)                                                                       \
    do {                                                                                         \
        __typeof__(&name) real = CT_LIBC(name);                                                  \
        if (!real) {                                                                             \
            errno = ENOSYS;                                                                      \
            return -1;                                                                           \
        }                                                                                        \
        int ended = ct_exec_begin();                                                             \
        int r = real(__VA_ARGS__);                                                               \
        if (ended)                                                                               \
            ct_exec_failed();                                                                    \
        return r;                                                                                \
    } while (0)

CT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    CT_EXEC(execve, path, argv, envp);
}

CT_EXPORT int execv(const char *path, char *const argv[])
{
    CT_EXEC(execv, path, argv);
}

CT_EXPORT int execvp(const char *file, char *const argv[])
{
    CT_EXEC(execvp, file, argv);
}

CT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    CT_EXEC(execvpe, file, argv, envp);
}

CT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    CT_EXEC(fexecve, fd, argv, envp);
}

CT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                       int flags)
{
    CT_EXEC(execveat, dirfd, path, argv, envp, flags);
}

/* The execl family: arguments up to the NULL become an argv (then, for execle, the
 * environment), counted as the C library counts them: the first argument, then those after it
 * up to the NULL. */
static size_t ct_count_args(va_list ap)
{
    size_t n = 1;
    while (va_arg(ap, char *))
        n++;
    return n;
}

/* Declares `argv` holding `arg` and the variadic arguments up to the NULL, leaving `ap` started
 * just past that NULL (execle reads the environment from it); the caller ends `ap`. */
#define CT_EXECL_ARGV(argv, arg, ap)                                                             \
    va_list ap;                                                                                  \
    va_start(ap, arg);                                                                           \
    size_t n_ = ct_count_args(ap);                                                               \
    va_end(ap);                                                                                  \
    char *argv[n_ + 1];                                                                          \
    va_start(ap, arg);                                                                           \
    argv[0] = (char *)(arg);                                                                     \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                          \
        argv[i_] = va_arg(ap, char *)

CT_EXPORT int execl(const char *path, const char *arg, ...)
{
    CT_EXECL_ARGV(argv, arg, ap);
    va_end(ap);
    CT_EXEC(execv, path, argv);
}

CT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    CT_EXECL_ARGV(argv, arg, ap);
    va_end(ap);
    CT_EXEC(execvp, file, argv);
}

CT_EXPORT int execle(const char *path, const char *arg, ...)
{
    CT_EXECL_ARGV(argv, arg, ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    CT_EXEC(execve, path, argv, envp);
}

/* The C library's _exit, resolved when libcutrace loads: _exit may be called from a signal
 * handler or a vfork child, where dlsym (it takes the loader's lock) may not. */
static void (*ct_real_exit)(int);

__attribute__((constructor)) static void ct_exec_load(void)
{
    ct_real_exit = CT_LIBC(_exit);
}

static _Noreturn void ct_exit(int status)
{
    ct_exit_now(status);
    if (ct_real_exit)
        ct_real_exit(status);
    syscall(SYS_exit_group, status); /* what the C library's _exit does */
    __builtin_unreachable();
}

CT_EXPORT void _exit(int status)
{
    ct_exit(status);
}

CT_EXPORT void _Exit(int status)
{
    ct_exit(status);
}
