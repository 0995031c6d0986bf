/* Reading a trace's records in the analyzer's tests (see an_records.h). */
#define _GNU_SOURCE /* asprintf */
#include "an_records.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int an_each_record(const char *dir, int (*fn)(const ct_reader *, const ct_rec *, void *), void *ctx)
{
    char *paths[64], err[512];
    size_t n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && n < 64 && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 8 && !strcmp(e->d_name + len - 8, ".cutrace") &&
            asprintf(&paths[n], "%s/%s", dir, e->d_name) > 0)
            n++;
    }
    if (d)
        closedir(d);
    ct_reader *r = NULL;
    int rc = -1;
    if (!n)
        fprintf(stderr, "%s: expected trace files (*.cutrace), found none\n", dir);
    else if (ct_reader_open(&r, (const char *const *)paths, n, NULL, err, sizeof err) < 0)
        fprintf(stderr, "%s: %s\n", dir, err);
    else {
        ct_rec rec;
        while ((rc = ct_reader_next(r, &rec)) == 1 && !fn(r, &rec, ctx))
            ;
        if (rc < 0)
            fprintf(stderr, "%s: %s\n", dir, ct_reader_error(r));
        rc = rc < 0 ? -1 : 0;
        ct_reader_close(r);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    return rc;
}
