/* The `cutrace` command: plugs the analyzer's features into the model (cta_features.h) and
 * dispatches `cutrace COMMAND ARGS...` through the table built from commands.h. */
#include <stdio.h>
#include <string.h>

#include "cta_cmd.h"
#include "cta_features.h"

#define CUTRACE_VERSION "0.1"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} cta_command;

static const cta_command cta_commands[] = {
#define CTA_CMD(name, help) {#name, cta_cmd_##name, help},
#include "commands.h"
#undef CTA_CMD
};

static void cta_usage(FILE *out)
{
    fprintf(out, "usage: cutrace COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cta_commands / sizeof cta_commands[0]; i++)
        fprintf(out, "  %-10s %s\n", cta_commands[i].name, cta_commands[i].help);
    fprintf(out, "\n`cutrace COMMAND --help` describes a command.\n");
}

int main(int argc, char **argv)
{
    cta_model_plug(cta_features, CTA_FEAT_N);
    if (argc < 2) {
        cta_usage(stderr);
        return CTA_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        cta_usage(stdout);
        return CTA_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("cutrace %s (trace format %d.%d)\n", CUTRACE_VERSION, CT_FORMAT_MAJOR,
               CT_FORMAT_MINOR);
        return CTA_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof cta_commands / sizeof cta_commands[0]; i++)
        if (!strcmp(cmd, cta_commands[i].name))
            return cta_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cutrace: unknown command '%s'\n\n", cmd);
    cta_usage(stderr);
    return CTA_EXIT_USAGE;
}
