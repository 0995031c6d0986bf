/* The cutrace commands, one line each: CTA_CMD(name, "one-line help"). A command is
 * `int cta_cmd_NAME(int argc, char **argv)` in cli/cmd_NAME.c (cta_cmd.h), called with argv[0] the
 * command's name; it returns the process exit status (cta_cli.h). Adding a command is one file
 * and one line here. */
CTA_CMD(dump, "print traces record by record as text, for debugging")
CTA_CMD(summary, "tables and diagnoses: kernels, copies, API, VRAM, CPU-vs-GPU breakdown, ranks")
CTA_CMD(run, "run a program with the CUDA tracer preloaded and say where its traces are")
CTA_CMD(timeline, "Chrome Trace / Perfetto JSON timeline: calls, GPU streams, flows, memory counters")
CTA_CMD(report, "one self-contained HTML page: plots of the summary, diagnosis cards, timeline overview")
CTA_CMD(export, "tables for SQL and data engines: SQLite (Nsight Systems' schema) or compressed CSV")
