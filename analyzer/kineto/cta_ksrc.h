/* The bytes of a Kineto file as its JSON reader (cta_kineto.c) wants them: decompressed through
 * gzip (zlib passes plain text through) and through any further layers of gzip inside it,
 * CTA_KINETO_MAX_GZIP layers in all, and without a leading UTF-8 byte-order mark.
 *
 * Contract: reads are streaming, a block at a time: memory is one inflate stream and 64 KiB per
 * layer. A file that cannot be read as such (more layers, UTF-16 text, a gzip stream damaged or
 * cut short at any layer) fails at the read that meets it, with why in words (without the path:
 * the reader adds it and the offset). */
#ifndef CTA_KSRC_H
#define CTA_KSRC_H

#include <stddef.h>

#define CTA_KINETO_MAX_GZIP 8 /* layers of gzip, the file's own and those inside it */

typedef struct cta_ksrc cta_ksrc;

/* NULL, with "PATH: why" in err, when the file cannot be opened (or memory is short). */
cta_ksrc *cta_ksrc_open(const char *path, char *err, size_t errlen);
/* Up to n bytes: their number, 0 at the end, -1 when the read failed (cta_ksrc_error says why). */
long cta_ksrc_read(cta_ksrc *s, unsigned char *buf, size_t n);
const char *cta_ksrc_error(const cta_ksrc *s);
/* Whether the file is gzip-compressed (for the reader's words on what it found). */
int cta_ksrc_gzip(const cta_ksrc *s);
void cta_ksrc_close(cta_ksrc *s);

#endif
