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
/* What the PATH arguments are: 1 when every path is a Kineto trace file or a directory directly
 * holding one (cta_kineto_is_input), 0 when none is, -1 when they are mixed. A directory of
 * cutrace traces is one whatever JSON lies beside them. */
int cta_paths_kineto(char *const *paths, int n);

#endif
