/* Internal: file header sizing for the writer and parsing for the reader (FORMAT.md 3.1). Before
 * parsing, the caller has checked the magic, the version, that len == 16 + body_size + 4, and
 * the CRC. */
#ifndef CT_HEADER_H
#define CT_HEADER_H

#include "cttrace.h"

typedef struct {
    ct_header h;
    char *store;       /* NUL-terminated copies of the text fields */
    const char **env;
} ct_header_store;

/* Bytes ct_header_encode needs for h. */
size_t ct_header_bound(const ct_header *h);
/* Fills hs (pointers into its own allocations); 0, CT_E_CORRUPT or CT_E_NOMEM. */
int ct_header_parse(const uint8_t *buf, size_t len, ct_header_store *hs);
void ct_header_store_free(ct_header_store *hs);

#endif
