/* What every cutrace command shares, and the stages that work for a command (loading, the
 * Kineto conversion, the overview's second pass): exit statuses, and opening traces and
 * reporting a bad command line the same way. */
#ifndef CTA_CLI_H
#define CTA_CLI_H

#include "cttrace.h"

enum {
    CTA_EXIT_OK = 0,
    CTA_EXIT_FAIL = 1,  /* the command ran and found a problem it reports */
    CTA_EXIT_USAGE = 2, /* bad command line */
    CTA_EXIT_INPUT = 3, /* an input could not be read at all */
};

/* Opens the traces; on failure prints "cutrace: error: PATH: why" on stderr and returns
 * CTA_EXIT_INPUT, else CTA_EXIT_OK. Damage is reported later as warnings on stderr. */
int cta_cli_open(ct_reader **r, char *const *paths, size_t n, const ct_reader_opts *opts);
/* Prints "cutrace CMD: MSG" and a hint to run `cutrace CMD --help`; returns CTA_EXIT_USAGE. */
int cta_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
