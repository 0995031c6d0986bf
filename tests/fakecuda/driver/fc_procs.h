/* The generated cuGetProcAddress table (fc_procs.c, from gen_driver.py): for each base name,
 * in name order, its legacy variants in version order, each paired with its own per-thread
 * variant if it has one. fc_proc_resolve (fc_core.c) applies cuda_api.resolve's rule. */
#ifndef FC_PROCS_H
#define FC_PROCS_H

#include <stddef.h>

typedef struct {
    int version;
    int pt_version;     /* version of the per-thread variant, 0 if none */
    void *fn;
    void *pt_fn;        /* NULL if none */
    const char *symbol;
    const char *pt_symbol;
} fc_proc_variant;

typedef struct {
    const char *name;
    unsigned first, count; /* into fc_proc_variants */
} fc_proc_entry;

extern const fc_proc_variant fc_proc_variants[];
extern const fc_proc_entry fc_proc_entries[];
extern const unsigned fc_proc_entry_count;

#endif
