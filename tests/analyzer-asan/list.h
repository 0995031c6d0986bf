/* The analyzer's suite again, built with ASan/UBSan: the tests (tests/analyzer/test-*.c), the
 * analyzer's modules and the format library they call are sanitizer builds, and the tests run
 * the sanitizer build of cutrace ($(B)/asan/bin/cutrace). */
#include "../analyzer/list.h"
