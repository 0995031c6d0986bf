/* Starting and stopping slowfs (slowfs.c) from a test: the mount lives in a new directory under
 * the test's temporary directory, served by a child process until sf_stop. */
#ifndef SF_H
#define SF_H

#include <stdint.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;
    char dir[4096];  /* the mount point */
    char file[8192]; /* its one file */
} sf_mount;

/* Mounts a file of size bytes served at rate bytes/s. Returns 0 once the file can be opened;
 * calls ctt_skip with slowfs's message when this machine offers no FUSE mount; -1 (reason
 * printed) on any other failure. */
int sf_start(sf_mount *m, uint64_t size, uint64_t rate);
/* Unmounts and reaps the server: 0 when it exited cleanly, -1 (printed) otherwise. */
int sf_stop(sf_mount *m);
/* The byte slowfs serves at offset i. */
static inline uint8_t sf_byte(uint64_t i) { return (uint8_t)(i % 251); }

#endif
