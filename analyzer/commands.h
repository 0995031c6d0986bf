/* The cutrace commands, one line each: CT_CMD(name, "one-line help"). A command is
 * `int ct_cmd_NAME(int argc, char **argv)` in analyzer/cmd_NAME.c, called with argv[0] the
 * command's name; it returns the process exit status (ct_cli.h). Adding a command is one file
 * and one line here. */
CT_CMD(dump, "print traces record by record as text, for debugging")
CT_CMD(summary, "tables and diagnoses: kernels, copies, API, VRAM, CPU-vs-GPU breakdown, ranks")
CT_CMD(run, "run a program with the CUDA tracer preloaded and say where its traces are")
CT_CMD(timeline, "Chrome Trace / Perfetto JSON timeline: calls, GPU streams, flows, memory counters")
