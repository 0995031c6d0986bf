/* Python's exit by an uncaught KeyboardInterrupt (see ctp_pyexit.h). */
#define _GNU_SOURCE
#include "ctp_pyexit.h"

#include <dlfcn.h>
#include <signal.h>

#include "ctp_pylayout.h"

static const int *ctp_pyexit_flag; /* Python's unhandled-interrupt flag */
static void (*ctp_pyexit_end)(int sig);

static void ctp_pyexit_at_exit(void)
{
    if (*ctp_pyexit_flag)
        ctp_pyexit_end(SIGINT);
}

void ctp_pyexit_watch(void (*end)(int sig))
{
    static int watching;
    int (*at_exit)(void (*)(void)) = (int (*)(void (*)(void)))dlsym(RTLD_DEFAULT, "Py_AtExit");
    const ctp_py_layout *L = at_exit ? ctp_py_layout_of(ctp_py_version_hex()) : NULL;
    if (watching || !L)
        return;
    /* to 3.11 a global; from 3.12 a field of the runtime's state */
    const char *runtime = L->rt_kbint == CTP_PY_NONE ? NULL : dlsym(RTLD_DEFAULT, "_PyRuntime");
    const int *flag = L->rt_kbint == CTP_PY_NONE
                          ? dlsym(RTLD_DEFAULT, "_Py_UnhandledKeyboardInterrupt")
                          : runtime ? (const int *)(runtime + L->rt_kbint) : NULL;
    if (!flag)
        return;
    ctp_pyexit_flag = flag;
    ctp_pyexit_end = end;
    watching = at_exit(ctp_pyexit_at_exit) == 0;
}
