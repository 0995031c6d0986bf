/* The CPython versions cutrace reads (ctp_python.c reads with them): each version's offsets
 * into the interpreter's structures, looked up by the running interpreter's PY_VERSION_HEX, so
 * that a version is added in one place. */
#ifndef CTP_PYLAYOUT_H
#define CTP_PYLAYOUT_H

/* One CPython version's offsets (bytes). Provenance: CPython's Include/cpython/pystate.h
 * (PyThreadState.cframe, 3.13 .current_frame, 3.8-3.10 .frame), Include/internal/pycore_frame.h
 * (_PyCFrame, _PyInterpreterFrame; 3.8-3.10 Include/frameobject.h, cpython/frameobject.h:
 * PyFrameObject), Include/internal/pycore_runtime.h (_PyRuntimeState), Include/cpython/code.h (PyCodeObject), Include/cpython/unicodeobject.h
 * (PyASCIIObject, PyCompactUnicodeObject) of each release; each checked with offsetof against
 * that release's headers (Debian's python3.11-dev; pyenv's 3.8.18, 3.9.18, 3.10.13, 3.12.1 and
 * 3.13.0). Before 3.11 each frame is a heap object and each runs in its own native evaluation
 * frame; the code object has no qualified name (co_name) and its code is a bytes object. */
#define CTP_PY_NONE 0xffffu
enum { CTP_PY_LINES_311, CTP_PY_LINES_310, CTP_PY_LNOTAB }; /* how a line table is coded */
typedef struct {
    unsigned hex_lo, hex_hi;           /* PY_VERSION_HEX range, major.minor */
    unsigned one_per_loop;             /* 3.8-3.10: an evaluation loop runs one frame */
    unsigned fr_lasti, lasti_bytes;    /* 3.8-3.10: the int f_lasti, and bytes per unit of it */
    unsigned lines;                    /* CTP_PY_LINES_311 ... */
    unsigned ts_frame;                 /* PyThreadState: the _PyCFrame (3.11, 3.12) or the frame */
    unsigned cframe_current;           /* _PyCFrame.current_frame; NONE: ts_frame is the frame */
    unsigned fr_code, fr_previous, fr_instr, fr_owner, fr_size;
    unsigned fr_is_entry;              /* 3.11: the frame a C call of the loop entered at */
    unsigned owner_cstack;             /* 3.12+: the shim frame the loop pushes on entry */
    unsigned co_firstlineno, co_filename, co_qualname, co_linetable, co_code;
    unsigned str_state, str_length, str_ascii_data, str_utf8_length, str_utf8;
    unsigned bytes_size, bytes_data;
    unsigned ts_chunk;                 /* 3.11+: PyThreadState.datastack_chunk (datastack_top
                                        * follows it), where the thread's frames lie; NONE before */
    unsigned rt_kbint;                 /* 3.12+: _PyRuntime.signals.unhandled_keyboard_interrupt
                                        * (Include/internal/pycore_signal.h); NONE before, where
                                        * it is the global _Py_UnhandledKeyboardInterrupt */
} ctp_py_layout;

/* The running interpreter's PY_VERSION_HEX. Py_Version (3.11+) is data; before it,
 * Py_GetVersion's text ("3.10.13 (main, ..." or "3.9.0rc2 (...") says it, formatted from
 * constants into a static buffer (no Python code runs). 0 if neither is found. */
unsigned long ctp_py_version_hex(void);
/* The layout of the version whose PY_VERSION_HEX is hex; NULL for a version not known. */
const ctp_py_layout *ctp_py_layout_of(unsigned long hex);

#endif
