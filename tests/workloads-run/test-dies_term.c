#include "wl_run.h"

#include <signal.h>

TEST_IMPL(dies_term)
{
    return wl_check_death("term", 0, SIGTERM);
}
