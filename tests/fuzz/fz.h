/* What the fuzz targets (make fuzz) and the regression replay of tests/robust share: the
 * checksum repair that lets mutated inputs reach the record decoder, the conversion of real
 * traces into stored (uncompressed) seeds, one pass of the reader over a whole file image, and
 * the input file the targets write each input into, and the cutrace command lines every input
 * goes through.
 *
 * Checksums: a mutation almost never keeps a CRC32C valid, so a fuzzer fed raw traces would only
 * test the checksum check. fz_fix_checksums rewrites the file header CRC and the CRCs of every
 * chunk it can walk to in order, so mutated records, sizes and counts get decoded; the targets
 * run each input both as is and repaired. */
#ifndef FZ_H
#define FZ_H

#include <stddef.h>
#include <stdint.h>

/* Recomputes the header and chunk checksums of a file image in place (as far as the chunk
 * chain can be followed from the header: each chunk must start where the previous ends). */
void fz_fix_checksums(uint8_t *buf, size_t len);

/* Rewrites the file image in[0..len) with every zstd chunk stored raw (decompressed, RAW flag,
 * checksums recomputed), so byte mutations land in records. Returns a malloc'd image and its
 * length in *out_len, or NULL if the image is not a readable trace. */
uint8_t *fz_rawify(const uint8_t *in, size_t len, size_t *out_len);

/* Reads the trace at path completely through the format library, in file order with chunk
 * records, in time order, and in time order merged with itself under a small max_pending,
 * resolving every string, frame and stack id the records name. Returns the number of records
 * delivered (for the caller to sanity-check), or -1 if the file could not be opened (an
 * expected outcome for a damaged image). Warnings are counted, not printed. */
long fz_read_all(const char *path);

/* The input every target reads, in a memfd so that the readers see a real file: fz_input_open
 * makes it (from LLVMFuzzerInitialize; name: the memfd's, for debugging), fz_input replaces its
 * content with data[0..size), its checksums repaired if fix (fz_fix_checksums), and returns its
 * path. Both abort on failure. */
void fz_input_open(const char *name);
const char *fz_input(const uint8_t *data, size_t size, int fix);

/* The cutrace command lines each input is run through; "@" stands for the input's path,
 * "%sqlite" and "%csv" for export's outputs (fz_argv). NULL-terminated list of NULL-terminated
 * argv arrays (argv[0] is the command name). */
extern const char *const *const fz_commands[];

/* argv (at most 15 words and a NULL) of fz_commands[c] with "@" as path and "%NAME" as the
 * path NAME in a scratch directory (made on first use). Returns argc; aborts if the scratch
 * directory cannot be made. fz_scratch_remove removes it with what the command wrote: call it
 * after each command (export wants a new CSV directory each time). */
int fz_argv(size_t c, const char *path, char *argv[16]);
void fz_scratch_remove(void);

#endif
