/* The commands' entry points, one per line of commands.h: `int cta_cmd_NAME(int argc, char
 * **argv)` in cli/cmd_NAME.c, called by main.c with argv[0] the command's name; it returns the
 * process exit status (CTA_EXIT_*, cta_cli.h). */
#ifndef CTA_CMD_H
#define CTA_CMD_H

#include "cta_cli.h"

#define CTA_CMD(name, help) int cta_cmd_##name(int argc, char **argv);
#include "commands.h"
#undef CTA_CMD

#endif
