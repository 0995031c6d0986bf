#include "wl_run.h"

#include <signal.h>

TEST_IMPL(dies_kill)
{
    return wl_check_death("kill", 0, SIGKILL);
}
