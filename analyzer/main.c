/* The `cutrace` command: dispatches `cutrace COMMAND ARGS...` through the table built from
 * commands.h, and holds the helpers every command shares (ct_cli.h). */
#include "ct_cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CUTRACE_VERSION "0.1"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} ct_command;

static const ct_command ct_commands[] = {
#define CT_CMD(name, help) {#name, ct_cmd_##name, help},
#include "commands.h"
#undef CT_CMD
};

static void ct_usage(FILE *out)
{
    fprintf(out, "usage: cutrace COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof ct_commands / sizeof ct_commands[0]; i++)
        fprintf(out, "  %-10s %s\n", ct_commands[i].name, ct_commands[i].help);
    fprintf(out, "\n`cutrace COMMAND --help` describes a command.\n");
}

int ct_cli_open(ct_reader **r, char *const *paths, size_t n, const ct_reader_opts *opts)
{
    char err[1024];
    int rc = ct_reader_open(r, (const char *const *)paths, n, opts, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "cutrace: error: %s\n", err);
        return CT_EXIT_INPUT;
    }
    return CT_EXIT_OK;
}

int ct_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cutrace %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see `cutrace %s --help`)\n", cmd);
    return CT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        ct_usage(stderr);
        return CT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        ct_usage(stdout);
        return CT_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("cutrace %s (trace format %d.%d)\n", CUTRACE_VERSION, CT_FORMAT_MAJOR,
               CT_FORMAT_MINOR);
        return CT_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof ct_commands / sizeof ct_commands[0]; i++)
        if (!strcmp(cmd, ct_commands[i].name))
            return ct_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cutrace: unknown command '%s'\n\n", cmd);
    ct_usage(stderr);
    return CT_EXIT_USAGE;
}
