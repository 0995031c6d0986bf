#include "wl_run.h"

#include <signal.h>

TEST_IMPL(dies_exit)
{
    return wl_check_death("exit", 1, 3);
}
