/* libcutrace as an NVTX injection library (ctp_nvtx.c): the one entry point NVIDIA's NVTX
 * library looks up in the library NVTX_INJECTION64_PATH names, and the calls it then routes here.
 *
 * Contract: InitializeInjectionNvtx2 (exported on purpose) fills the NVTX library's CORE and
 * CORE2 callback slots (marks, push/pop and start/end ranges, thread and category names,
 * domains, registered strings). Each push, pop, start, end or mark stores one raw record
 * (ctp_nvtx_raw, ctp_state.h: the message's bytes copied, at most CTP_NVTX_TEXT) into the
 * calling thread's ring, with no lock, allocation or system call once the thread is registered;
 * the writer joins them into NVTX_RANGE and NVTX_MARK records (ctp_nvtxw.h). Only a running
 * trace records (NVTX alone never starts one). Push/pop levels are counted per thread and
 * domain, traced or not, and returned as NVTX defines them (a pop with nothing pushed returns
 * -1); start/end ids are unique in the process. Domain creation and string registration (rare)
 * allocate and keep what they are given for the life of the process; errno is preserved. */
#ifndef CTP_NVTX_H
#define CTP_NVTX_H

#include <stdint.h>

/* NvtxInitializeInjectionNvtxFunc_t of nvtxTypes.h: get is the NVTX library's export-table
 * getter. Returns 1 when the slots are filled, 0 (NVTX then stays without a tool) if not. */
int InitializeInjectionNvtx2(const void *(*get)(uint32_t export_table_id));

#endif
