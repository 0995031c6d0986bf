#include "wl_run.h"

#include <signal.h>

TEST_IMPL(dies_abort)
{
    return wl_check_death("abort", 0, SIGABRT);
}
