/* LTTng-UST tracepoint provider "cutrace_bench" of the LTTng baseline (ib_lttng.c): an entry
 * event (function id, first argument) and an exit event (function id, result) per call, the
 * pair THAPI's interposers emit. LTTng-UST's macros need this header to be includable more than
 * once, hence the guard form below. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER cutrace_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "ib_lttng_tp.h"

#if !defined(IB_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define IB_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(cutrace_bench, entry,
    LTTNG_UST_TP_ARGS(int, fn, uint64_t, arg),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, fn, fn)
                        lttng_ust_field_integer_hex(uint64_t, arg, arg)))

LTTNG_UST_TRACEPOINT_EVENT(cutrace_bench, exit,
    LTTNG_UST_TP_ARGS(int, fn, int, result),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, fn, fn)
                        lttng_ust_field_integer(int, result, result)))

#endif

#include <lttng/tracepoint-event.h>
