/* Wire primitives shared by the encoder, the chunk framer and the reader (FORMAT.md section 2):
 * LEB128 varints, zigzag, little-endian fixed-width fields and CRC32C. Internal to the library.
 *
 * Writers (ct__put_*) assume the caller checked capacity (at most CT__UV_MAX bytes per varint).
 * Readers (ct__get_*) never read at or past `end`: a missing value reads as 0 (a trailing field
 * an older writer did not write) and a value that runs past `end` or beyond 10 bytes sets *bad. */
#ifndef CT__WIRE_H
#define CT__WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CT__UV_MAX 10

static inline uint8_t *ct__put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t ct__zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t ct__unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline uint8_t *ct__put_sv(uint8_t *p, int64_t v) { return ct__put_uv(p, ct__zigzag(v)); }

/* The readers are always inlined: the decoder's hot loop reads every field through them, and
 * with one call site per field (ct_records.h) gcc would otherwise call them out of line. */
#define CT__WIRE_INLINE static inline __attribute__((always_inline))

CT__WIRE_INLINE uint64_t ct__get_uv(const uint8_t **pp, const uint8_t *end, int *bad)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return 0;
    uint64_t v = *p++;
    if (v < 0x80) {
        *pp = p;
        return v;
    }
    v &= 0x7f;
    for (unsigned shift = 7;; shift += 7) {
        if (p >= end || shift > 63) {
            *bad = 1;
            *pp = end;
            return 0;
        }
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80)
            break;
    }
    *pp = p;
    return v;
}

CT__WIRE_INLINE uint32_t ct__get_u32v(const uint8_t **pp, const uint8_t *end, int *bad)
{
    uint64_t v = ct__get_uv(pp, end, bad);
    if (v > UINT32_MAX) {
        *bad = 1;
        return 0;
    }
    return (uint32_t)v;
}

CT__WIRE_INLINE int64_t ct__get_sv(const uint8_t **pp, const uint8_t *end, int *bad)
{
    return ct__unzigzag(ct__get_uv(pp, end, bad));
}

static inline void ct__le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void ct__le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void ct__le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t ct__rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ct__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ct__rd64(const uint8_t *p) { return ct__rd32(p) | (uint64_t)ct__rd32(p + 4) << 32; }

/* The chunk header (FORMAT.md 3.2), its fields in order, for the writer (ct_chunk.c) and the reader
 * (ct_chunkload.c): CT__CHUNK_FIELDS(C) calls C(name, bits, from) per field, little-endian of that
 * many bits; from: info, the ct_chunk_info member of that name, or frame, what the framing itself
 * writes and checks (magic, header size, CRCs). A field is only ever appended before header_crc,
 * which ends the header whatever its size; one that an older writer's shorter header lacks reads
 * as 0. */
#define CT__CHUNK_FIELDS(C)                                                                 \
    C(magic, 32, frame)                                                                    \
    C(header_size, 16, frame)                                                              \
    C(flags, 16, info)                                                                     \
    C(payload_size, 32, info)                                                              \
    C(raw_size, 32, info)                                                                  \
    C(seq, 64, info)                                                                       \
    C(tid, 32, info)                                                                       \
    C(nrecords, 32, info)                                                                  \
    C(ts_base, 64, info)                                                                   \
    C(corr_base, 64, info)                                                                 \
    C(t_min, 64, info)                                                                     \
    C(t_max, 64, info)                                                                     \
    C(low_water, 64, info)                                                                 \
    C(lost, 64, info)                                                                      \
    C(payload_crc, 32, frame)                                                              \
    C(max_span, 64, info) /* 1.1 */                                                        \
    C(header_crc, 32, frame)
#define CT__CHUNK_MEMBER(name, bits, from) uint##bits##_t name;
struct __attribute__((packed)) ct__chunk_layout { CT__CHUNK_FIELDS(CT__CHUNK_MEMBER) };
/* A field's offset in the header. */
#define CT__CHUNK_AT(name) offsetof(struct ct__chunk_layout, name)

/* CRC32C (Castagnoli) of buf, as FORMAT.md defines it. Async-signal-safe. */
uint32_t ct__crc32c(const void *buf, size_t len);

/* Walks the records of one chunk payload (a stream piece starting at ts_base) by type, length
 * and time only: checks that each record's framing fits, reports the range of record times,
 * the count and whether times never decrease, and calls each(ctx, type, body, body_end) for
 * every record whose type is below 64 and has its bit set in `types` (body after dts); a
 * negative return stops the walk and is stored in out->stop. Returns the number of bytes of well-framed records (== len when all are).
 * The writer uses it to fill a chunk header and refuse broken encoder output; the reader to
 * register definitions and find unsorted chunks before delivering anything. */
typedef struct {
    uint64_t t_min, t_max;
    uint32_t nrecords;
    int sorted;
    int stop;
} ct__scan_result;
typedef int (*ct__scan_fn)(void *ctx, uint64_t type, const uint8_t *body, const uint8_t *end);
size_t ct__scan_records(const uint8_t *p, size_t len, uint64_t ts_base, ct__scan_result *out,
                       uint64_t types, ct__scan_fn each, void *ctx);

#endif
