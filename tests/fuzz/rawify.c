/* fz_rawify as a command, for seeding the fuzz corpus: `rawify IN OUT` writes IN with every
 * chunk stored uncompressed (see fz.h). Exit 1 if IN is not a trace it can walk. */
#include <stdio.h>
#include <stdlib.h>

#include "fz.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rawify IN OUT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, len = 0, n;
    uint8_t *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += n) == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    size_t olen;
    uint8_t *out = buf ? fz_rawify(buf, len, &olen) : NULL;
    if (!out) {
        fprintf(stderr, "rawify: %s: not a trace with walkable chunks\n", argv[1]);
        return 1;
    }
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out, 1, olen, f) != olen || fclose(f) != 0) {
        perror(argv[2]);
        return 1;
    }
    free(buf);
    free(out);
    return 0;
}
