/* What every cutrace command shares (cta_cli.h). */
#include "cta_cli.h"

#include <stdarg.h>
#include <stdio.h>

int cta_cli_open(ct_reader **r, char *const *paths, size_t n, const ct_reader_opts *opts)
{
    char err[1024];
    int rc = ct_reader_open(r, (const char *const *)paths, n, opts, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "cutrace: error: %s\n", err);
        return CTA_EXIT_INPUT;
    }
    return CTA_EXIT_OK;
}

int cta_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cutrace %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see `cutrace %s --help`)\n", cmd);
    return CTA_EXIT_USAGE;
}
