/* The Kineto inputs of a command: which PATH arguments are Kineto traces, their conversion into
 * cutrace traces (cta_kineto_conv.h) once per process, and what the commands ask of a trace that
 * was converted.
 *
 * Contract: the converted traces are removed when the process exits (atexit), whether the
 * command succeeded or not, or is ended by SIGINT, SIGTERM, SIGHUP or SIGPIPE (a handler removes
 * them and lets the signal end the process, where the program had left the default action). */
#ifndef CTA_KINETO_OPEN_H
#define CTA_KINETO_OPEN_H

#include <stddef.h>
#include <stdint.h>

#include "cta_kineto_conv.h"

/* 1 when path is a Kineto trace file or a directory directly holding one (by the names HTA's
 * trace_dir takes, below), else 0. */
int cta_kineto_is_input(const char *path);
/* The Kineto files of the PATH arguments: a file as given, a directory's files named *.json or
 * *.gz that are Kineto traces, by name (HTA's trace_dir). Malloc'd, each and the list. */
void cta_kineto_files(char *const *paths, int n, char ***files, size_t *nfiles);

/* The `cta_load_open` of Kineto inputs: paths are Kineto files or directories of them
 * (cta_kineto_files); kineto is cta_paths_kineto's answer (-1: mixed, an error). Converts each
 * file once per process (a second pass, as the overview's, reuses it) and opens the converted
 * traces; the reader's warnings name the Kineto file, and the missing END record (a Kineto trace
 * never has one) is not warned about. Returns a CTA_EXIT_* status. */
int cta_kineto_open(const char *cmd, char *const *paths, int npaths, int kineto, ct_reader **rd);

/* The Kineto file a converted trace came from (by its header), NULL for a cutrace trace. */
const char *cta_kineto_source(const ct_reader *rd, uint32_t file);
/* The file to name for trace `file` of rd: the Kineto file it was converted from, else its
 * own path. */
const char *cta_kineto_display_path(const ct_reader *rd, uint32_t file);
/* The conversion's counts of that file (NULL for a cutrace trace, and for one whose header
 * says "kineto" that this command did not convert). */
const cta_kconv_stats *cta_kineto_source_stats(const ct_reader *rd, uint32_t file);

#endif
