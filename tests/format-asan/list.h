/* The same tests as tests/format, built with -fsanitize=address,undefined. */
#include "../format/list.h"
