/* Expands the PATH arguments of `cutrace summary` and `cutrace timeline`: a file is taken as
 * given; a directory contributes every trace file below it (recursively, sorted by path), a trace
 * file being one that starts with the format's magic. */
#ifndef CTA_PATHS_H
#define CTA_PATHS_H

#include <stddef.h>

/* Returns 0 and a malloc'd NULL-terminated list in *out (cta_paths_free), or prints
 * "cutrace CMD: error: PATH: why" and returns -1 when a path does not exist or a directory holds
 * no trace. */
int cta_paths_expand(const char *cmd, char *const *in, int n, char ***out, size_t *nout);
void cta_paths_free(char **v);
/* Whether the directory holds a trace file (as the expansion finds them), silently. */
int cta_paths_has_traces(const char *dir);

#endif
