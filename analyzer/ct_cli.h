/* What every cutrace command shares: exit statuses and opening traces with the errors reported
 * the same way. */
#ifndef CT_CLI_H
#define CT_CLI_H

#include "cttrace.h"

enum {
    CT_EXIT_OK = 0,
    CT_EXIT_FAIL = 1,  /* the command ran and found a problem it reports */
    CT_EXIT_USAGE = 2, /* bad command line */
    CT_EXIT_INPUT = 3, /* an input could not be read at all */
};

#define CT_CMD(name, help) int ct_cmd_##name(int argc, char **argv);
#include "commands.h"
#undef CT_CMD

/* Opens the traces; on failure prints "cutrace: error: PATH: why" on stderr and returns
 * CT_EXIT_INPUT, else CT_EXIT_OK. Damage is reported later as warnings on stderr. */
int ct_cli_open(ct_reader **r, char *const *paths, size_t n, const ct_reader_opts *opts);
/* Prints "cutrace CMD: MSG" and a hint to run `cutrace CMD --help`; returns CT_EXIT_USAGE. */
int ct_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
