/* A Python program's end after an uncaught KeyboardInterrupt (Ctrl-C). Python handles SIGINT
 * itself; when the interrupt is left uncaught it finalizes, sets SIGINT back to the default and
 * kills itself with it, where no exit handler and no handler of the tracer's runs: the trace had
 * no END and read as killed by SIGKILL. A function registered with Py_AtExit runs at the end of
 * finalization; if Python's unhandled-interrupt flag is set there, the trace ends, killed by
 * SIGINT.
 *
 * Contract: ctp_pyexit_watch runs when a trace starts (ctp_session.c); it does nothing in a
 * process without Python, or with a Python whose layout is unknown (ctp_pylayout.h), and
 * registers once per address space (a forked child inherits the registration; Python keeps 32
 * such functions). `end` is then called with SIGINT, on the thread that finalizes Python. */
#ifndef CTP_PYEXIT_H
#define CTP_PYEXIT_H

void ctp_pyexit_watch(void (*end)(int sig));

#endif
