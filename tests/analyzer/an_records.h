/* Reading a trace's records in the analyzer's tests, for those that compare the analyzer's
 * figures with the records it read (linked into the analyzer suites only: it needs the format
 * library, which other suites sharing an_helpers do not link). */
#ifndef AN_RECORDS_H
#define AN_RECORDS_H

#include "cttrace.h"

/* Reads every .cutrace file of the trace directory dir through the format library, calling
 * fn(reader, record, ctx) on each record in time order (the reader resolves its strings); fn
 * returns nonzero to stop. 0 when all was read, -1 after printing why not. */
int an_each_record(const char *dir, int (*fn)(const ct_reader *, const ct_rec *, void *), void *ctx);
#endif
