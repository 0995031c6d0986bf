/* Internal: file header sizing for the writer and parsing for the reader (FORMAT.md 3.1). Before
 * parsing, the caller has checked the magic, the version, that len == 16 + body_size + 4, and
 * the CRC. */
#ifndef CT__HEADER_H
#define CT__HEADER_H

#include "cttrace.h"

typedef struct {
    ct_header h;
    char *store;       /* NUL-terminated copies of the text fields */
    const char **env;
} ct__header_store;

/* Bytes ct_header_encode needs for h. */
size_t ct__header_bound(const ct_header *h);
/* Fills hs (pointers into its own allocations); 0, CT_E_CORRUPT or CT_E_NOMEM. */
int ct__header_parse(const uint8_t *buf, size_t len, ct__header_store *hs);
void ct__header_store_free(ct__header_store *hs);

#endif
