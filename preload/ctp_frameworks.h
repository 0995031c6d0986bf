/* Which frameworks' CUDA libraries the traced process has loaded, for the trace header's
 * `frameworks` field (trace-format/FORMAT.md): the analyzer words its advice in a framework's
 * terms only when the framework is there. Called once, when the header is written (the first
 * traced CUDA call); not on the hot path: dl_iterate_phdr takes the loader's lock. */
#ifndef CTP_FRAMEWORKS_H
#define CTP_FRAMEWORKS_H

#include <stdint.h>

/* CT_FW_* bits of the objects mapped now. Leaves errno as it was. */
uint64_t ctp_frameworks_loaded(void);

#endif
