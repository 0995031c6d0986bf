/* A frame without unwind tables (suite.mk builds this file with none): libunwind can walk past it
 * only by its frame pointer, checking each address it reads through the pipe it opened at its
 * first use. The steps the victim makes after closing descriptors it did not open come through
 * here, so that every capture of their call sites makes libunwind use that pipe's numbers, which
 * the program's own files hold by then. */
#include "victim_bare.h"

void victim_bare_call(void (*fn)(void *, int), void *arg, int k)
{
    fn(arg, k);
    __asm__ volatile("" ::: "memory"); /* the call stays a call, its frame on the stack */
}
