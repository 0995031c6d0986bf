/* pyembed: a C program that embeds CPython and calls CUDA before the interpreter exists, from
 * Python code, and after the interpreter is gone (issue 14: nothing may crash at interpreter
 * start-up or finalization, and only the middle calls have Python frames).
 *
 *     pyembed
 *
 * Each phase makes 3 cuCtxSynchronize calls: "before" (Py_Initialize not yet called), "python"
 * (from a function of the Python code below, named embedded.py, through ctypes), "after"
 * (Py_FinalizeEx returned). stdout: "pyembed: before=0 python=0 after=0" (the calls' results
 * ORed per phase) and exit status 0 when all succeeded. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda.h>
#include <stdio.h>

static const char *const code =
    "import ctypes\n"
    "cu = ctypes.CDLL('libcuda.so.1')\n"
    "def step():\n"
    "    return cu.cuCtxSynchronize()  # line 4\n"
    "result = 0\n"
    "for _ in range(3):\n"
    "    result |= step()\n";

static int syncs(void)
{
    int r = 0;
    for (int i = 0; i < 3; i++)
        r |= cuCtxSynchronize();
    return r;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
        return 2;
    int before = syncs();
    Py_Initialize();
    PyObject *globals = PyDict_New(), *compiled = Py_CompileString(code, "embedded.py", Py_file_input);
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject *ran = compiled ? PyEval_EvalCode(compiled, globals, globals) : NULL;
    PyObject *res = ran ? PyDict_GetItemString(globals, "result") : NULL;
    long python = res ? PyLong_AsLong(res) : -1;
    if (!ran)
        PyErr_Print();
    Py_XDECREF(ran);
    Py_XDECREF(compiled);
    Py_DECREF(globals);
    if (Py_FinalizeEx() != 0)
        return 3;
    int after = syncs();
    printf("pyembed: before=%d python=%ld after=%d\n", before, python, after);
    return before || python || after;
}
