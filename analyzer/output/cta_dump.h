/* The text of `cutrace dump`: every record of a trace as one line "TS TYPE field=value ...", TS
 * in ns of the (merged) monotonic clock; string ids shown resolved and quoted, followed by
 * "#ID"; header lines start with "header", a chunk's with "chunk" (file order with
 * ct_reader_opts.chunk_records). */
#ifndef CTA_DUMP_H
#define CTA_DUMP_H

#include <stdio.h>

#include "cttrace.h"

/* Prints every record r delivers, each file's header before its first record (file_order: r
 * reads the files one after the other) or all headers up front (time order). Returns
 * CTA_EXIT_OK, or CTA_EXIT_INPUT after printing the reader's error on stderr. */
int cta_dump_trace(FILE *o, ct_reader *r, int file_order);

#endif
