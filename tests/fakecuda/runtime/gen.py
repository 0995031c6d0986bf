#!/usr/bin/env python3
"""Generates the table-driven parts of the simulated libcudart.so.13 (see README.md).

usage: gen.py CUDA_INC OUTDIR HANDWRITTEN.c...
       gen.py --check UNSUPPORTED.txt HANDWRITTEN.c...   (only the checks below, on that list)

Reads getprocaddress.txt and exports.txt (next to this script: copies of NVIDIA's lists, so the
build does not depend on /work/shared), unsupported.txt (the exports not simulated: NAME ERROR
REASON, one a line) and the CUDA headers, and writes to OUTDIR:
  fc_rt_drv.h / fc_rt_drv.c  the driver entry-point table, one typed slot per request, and the
                             requests in the order NVIDIA's runtime makes them
  fc_rt_stubs.c              a stub for each line of unsupported.txt: returns its error, records
                             it, and (FAKECUDA_TRACE_UNSUPPORTED) names the function and reason
  fc_rt_forward.c            the plain forwarders of forward.txt (below)
  fc_rt_errors.c             cudaError_t names and the header's description of each
  libcudart.map              the version script: every export in node libcudart.so.13
A hand-written export is a definition starting with FC_EXPORT in one of the HANDWRITTEN files.
forward.txt lists exports that only pass their arguments, in order, to one driver entry point
("cudaName slot", the slot named as in fc_rt_drv.h): each becomes FC_CTX() then that call, every
argument cast to the driver's parameter type (the enums and handles coincide).
Every export must be hand-written, forwarded or listed in unsupported.txt, exactly one of them,
or the build fails.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PT_SUFFIXES = ("_ptds", "_ptsz")
# Headers the stubs include, so the compiler checks each stub against its declaration.
API_HEADERS = ("cuda_runtime_api.h", "cuda_profiler_api.h")
# Interop headers need GL/EGL/VDPAU types this build does not have; their stubs are defined
# without a prototype, which is call-compatible with any argument list on the C ABI.
INTEROP_HEADERS = ("cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h")
QUALIFIERS = {"extern", "__host__", "__device__", "__cudart_builtin__", "__CUDA_DEPRECATED",
              "CUDART_DEPRECATED", "__CUDART_DEPRECATED", "static", "inline"}


def die(msg):
    sys.exit("gen.py: " + msg)


def read_requests():
    path = os.path.join(HERE, "getprocaddress.txt")
    reqs = []
    for n, line in enumerate(open(path), 1):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if len(f) != 3 or not f[1].isdigit() or f[2] not in ("0", "2"):
            die("%s:%d: expected 'symbol version flags', found %r" % (path, n, line))
        reqs.append(("" if f[0] == "-" else f[0], int(f[1]), int(f[2])))
    return reqs


def read_exports():
    path = os.path.join(HERE, "exports.txt")
    out = []
    for line in open(path):
        name, _, node = line.strip().partition("@@")
        if name == "libcudart.so.13" and not node:
            continue  # the version node's own definition, listed by nm; not a function
        if node != "libcudart.so.13":
            die("%s: expected NAME@@libcudart.so.13, found %r" % (path, line))
        out.append(name)
    return out


def read_unsupported(exports, path):
    """name -> (error, reason) from unsupported.txt, checked against exports.txt."""
    out = {}
    for n, line in enumerate(open(path), 1):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split(None, 2)
        if len(f) != 3 or not f[1].startswith("cudaError"):
            die("%s:%d: expected 'NAME cudaErrorX REASON', found %r" % (path, n, line))
        if f[0] not in exports:
            die("%s:%d: %s is not in exports.txt" % (path, n, f[0]))
        if f[0] in out:
            die("%s:%d: %s is listed twice" % (path, n, f[0]))
        out[f[0]] = (f[1], f[2].strip())
    return out


def parse_decls(text):
    """name -> (return type, parameter text) for every CUDARTAPI declaration in a header."""
    decls = {}
    for m in re.finditer(r"extern\s+([^;{}()]*?)\bCUDARTAPI\s+(\w+)\s*\(([^;{}]*?)\)\s*;", text):
        ret = " ".join(w for w in m.group(1).split() if w not in QUALIFIERS)
        name, params = m.group(2), " ".join(m.group(3).split())
        params = re.sub(r"\s*__dv\([^)]*\)", "", params)  # C++ default arguments; the header #undefs __dv
        if "=" in params:  # C++-only overloads with default arguments
            continue
        decls.setdefault(name, (ret, params))
    return decls


def handwritten(files):
    names = set()
    for path in files:
        for m in re.finditer(r"^FC_EXPORT\b[^(;]*?\b(\w+)\s*\(", open(path).read(), re.M):
            names.add(m.group(1))
    return names


def read_pfns(inc):
    """Typedefs of cudaTypedefs.h and cudaProfilerTypedefs.h (the profiler's entry points): the
    public ones by name, and the lines of those cudaTypedefs.h keeps for older versions under
    __CUDA_API_VERSION_INTERNAL (which fc_rt_drv.h then repeats)."""
    text = open(os.path.join(inc, "cudaTypedefs.h")).read()
    start = text.index("#if defined(__CUDA_API_VERSION_INTERNAL)")
    end = text.index("#endif", start)
    pattern = r"typedef[^;]*\(CUDAAPI \*(PFN_\w+)\)[^;]*;"
    profiler = open(os.path.join(inc, "cudaProfilerTypedefs.h")).read()
    public = set(re.findall(pattern, text[:start] + text[end:] + profiler))
    internal = {m.group(1): m.group(0) for m in re.finditer(pattern, text[start:end])}
    return public, internal


def member(sym, ver, flags, public, internal, extra):
    """Slot name and type for one request; per-thread requests take the _ptds/_ptsz typedef."""
    cands = ["%s_v%d%s" % (sym, ver, s) for s in (PT_SUFFIXES if flags == 2 else ("",))]
    for c in cands:
        if "PFN_" + c in public:
            return c, "PFN_" + c
        if "PFN_" + c in internal:
            extra.append(internal["PFN_" + c])
            return c, "PFN_" + c
    return cands[-1], "void *"


def gen_driver(reqs, inc, out):
    public, internal = read_pfns(inc)
    slots, rows, seen, extra = [], [], set(), []
    for sym, ver, flags in reqs:
        if not sym:
            rows.append('    {"", 0, 0, FC_RT_NO_SLOT},')
            continue
        name, typ = member(sym, ver, flags, public, internal, extra)
        if name not in seen:
            seen.add(name)
            slots.append("    %s %s;" % (typ, name))
        rows.append('    {"%s", %d, %d, offsetof(fc_rt_driver, %s)},' % (sym, ver, flags, name))
    with open(os.path.join(out, "fc_rt_drv.h"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from getprocaddress.txt. */\n"
                "#ifndef FC_RT_DRV_H\n#define FC_RT_DRV_H\n#include <stddef.h>\n"
                "#include <cudaTypedefs.h>\n#include <cudaProfilerTypedefs.h>\n\n"
                "/* Older versions cudaTypedefs.h declares only for NVIDIA's internal use. */\n"
                "%s\n\n"
                "/* One slot per driver entry point NVIDIA's runtime requests, named\n"
                " * symbol_vVERSION, with _ptds/_ptsz for per-thread (flags 2) requests. NULL when\n"
                " * the driver does not offer it. */\n"
                "typedef struct {\n%s\n} fc_rt_driver;\n\n"
                "#define FC_RT_NO_SLOT ((size_t)-1)\n"
                "typedef struct {\n    const char *symbol;\n    int version;\n"
                "    unsigned flags;\n    size_t offset; /* in fc_rt_driver, or FC_RT_NO_SLOT */\n"
                "} fc_rt_request;\n\n"
                "extern const fc_rt_request fc_rt_requests[];\n"
                "extern const size_t fc_rt_nrequests;\n#endif\n"
                % ("\n".join(extra), "\n".join(slots)))
    with open(os.path.join(out, "fc_rt_drv.c"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from getprocaddress.txt. */\n"
                '#include "fc_rt_drv.h"\n\nconst fc_rt_request fc_rt_requests[] = {\n%s\n};\n'
                "const size_t fc_rt_nrequests = sizeof fc_rt_requests / sizeof fc_rt_requests[0];\n"
                % "\n".join(rows))


def read_forwards(exports):
    """cudaName -> driver slot, from forward.txt."""
    path = os.path.join(HERE, "forward.txt")
    out = {}
    for n, line in enumerate(open(path), 1):
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        if len(f) != 2 or f[0] not in exports or f[0] in out:
            die("%s:%d: expected 'EXPORT SLOT' for an export of exports.txt listed once, found %r" % (path, n, line))
        out[f[0]] = f[1]
    return out


def check_in_step(exports, hand, forwards, unsupported, path):
    twice = sorted(hand & set(forwards))
    if twice:
        die("forward.txt lists functions that are hand-written (FC_EXPORT): " + ", ".join(twice))
    hand = hand | set(forwards)
    both = sorted(hand & set(unsupported))
    if both:
        die("%s lists functions that are hand-written (FC_EXPORT): %s" % (path, ", ".join(both)))
    neither = [e for e in exports if e not in hand and e not in unsupported]
    if neither:
        die("exports.txt: expected each export hand-written (FC_EXPORT) or listed in %s, found neither for: %s"
            % (path, ", ".join(neither)))


def split_params(params):
    """(type, name) of each parameter of a prototype's parameter text."""
    out = []
    if params.strip() == "void":
        return out
    for p in params.split(","):
        m = re.match(r"^(.*?)\s*\b(\w+)\s*$", p.strip())
        if not m or not m.group(1):
            return None
        out.append((m.group(1), m.group(2)))
    return out


def gen_forwards(forwards, inc, out):
    api = {}
    for h in API_HEADERS:
        api.update(parse_decls(open(os.path.join(inc, h)).read()))
    text = open(os.path.join(inc, "cudaTypedefs.h")).read()
    pfns = dict(re.findall(r"typedef[^;]*\(CUDAAPI \*PFN_(\w+)\)\s*\(([^;]*)\)\s*;", text))
    funcs = []
    for name, slot in forwards.items():
        base = name[:-5] if name.endswith(PT_SUFFIXES) else name
        if base not in api or api[base][0] != "cudaError_t":
            die("forward.txt: %s: expected a cudaError_t declaration in the CUDA headers" % name)
        if slot not in pfns:
            die("forward.txt: %s: expected a PFN_%s typedef in cudaTypedefs.h" % (name, slot))
        ours, theirs = split_params(api[base][1]), split_params(" ".join(pfns[slot].split()))
        if ours is None or theirs is None or len(ours) != len(theirs):
            die("forward.txt: %s (%s) and %s (%s): expected parameters to pass one for one"
                % (name, api[base][1], slot, pfns[slot]))
        args = "".join(", (%s)%s" % (t, n) for (_, n), (t, _) in zip(ours, theirs))
        funcs.append("FC_FWD cudaError_t CUDARTAPI %s(%s)\n{\n    FC_CTX();\n"
                     "    return fc_rt_err(FC_DRV(fc_drv.%s%s));\n}\n" % (name, api[base][1], slot, args))
    with open(os.path.join(out, "fc_rt_forward.c"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from forward.txt: exports that pass their\n"
                " * arguments, in order, to one driver entry point. */\n"
                '#include "fc_rt.h"\n#define FC_FWD __attribute__((visibility("default")))\n\n' + "\n".join(funcs))


def c_string(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def gen_stubs(exports, hand, unsupported, inc, out):
    api = {}
    for h in API_HEADERS:
        api.update(parse_decls(open(os.path.join(inc, h)).read()))
    interop = {}
    for h in INTEROP_HEADERS:
        interop.update(parse_decls(open(os.path.join(inc, h)).read()))
    lines = []
    for name in exports:
        if name in hand:
            continue
        base = name[:-5] if name.endswith(PT_SUFFIXES) else name
        if base in api:
            ret, params = api[base]
        elif base in interop:
            ret, params = interop[base][0], ""
        else:
            die("export %s: no declaration in the CUDA headers; hand-write it with FC_EXPORT" % name)
        if ret != "cudaError_t":
            die("export %s returns %r, not cudaError_t; hand-write it with FC_EXPORT" % (name, ret))
        err, why = unsupported[name]
        lines.append("FC_STUB cudaError_t CUDARTAPI %s(%s)\n{\n    return fc_rt_unsupported(%s, %s, %s);\n}\n"
                     % (name, params, c_string(name), err, c_string(why)))
    with open(os.path.join(out, "fc_rt_stubs.c"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from unsupported.txt: exports the simulation\n"
                " * does not implement. Each returns the listed error and records it as the last error. */\n"
                '#include "fc_rt.h"\n#include <cuda_profiler_api.h>\n#pragma GCC diagnostic ignored "-Wunused-parameter"\n'
                "#define FC_STUB __attribute__((visibility(\"default\")))\n\n" + "\n".join(lines))


def gen_errors(inc, out):
    text = open(os.path.join(inc, "driver_types.h")).read()
    start = text.index("enum __device_builtin__ cudaError\n")
    body = text[start:text.index("};", start)]
    rows = []
    for m in re.finditer(r"/\*\*(.*?)\*/\s*,?\s*(cuda\w+)\s*=\s*(\d+)", body, re.S):
        doc = " ".join(w for w in m.group(1).replace("*", " ").split())
        doc = re.sub(r"\\deprecated\s*", "", doc).replace("::", "").replace('"', "'")
        sentence = re.split(r"(?<=[a-z)])\.\s", doc + " ")[0].rstrip(". ")
        # NVIDIA documents sticky errors as needing a new process.
        sticky = int("process must be terminated and relaunched" in doc)
        rows.append('    {%s, %d, "%s", "%s"},' % (m.group(3), sticky, m.group(2), sentence))
    values = len(re.findall(r"\bcuda\w+\s*=\s*\d+", body))
    if len(rows) != values:
        die("driver_types.h: expected a description before each of the %d cudaError values, found %d"
            % (values, len(rows)))
    with open(os.path.join(out, "fc_rt_errors.c"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from driver_types.h: each cudaError_t,\n"
                " * whether it is sticky, its name, and the first sentence of the header's description. */\n"
                '#include "fc_rt.h"\n\nconst fc_rt_error_desc fc_rt_error_table[] = {\n%s\n};\n'
                "const size_t fc_rt_nerrors = sizeof fc_rt_error_table / sizeof fc_rt_error_table[0];\n"
                % "\n".join(rows))


def gen_map(exports, out):
    with open(os.path.join(out, "libcudart.map"), "w") as f:
        f.write("/* Generated by tests/fakecuda/runtime/gen.py from exports.txt. */\n"
                "libcudart.so.13 {\n  global:\n%s\n    fakecuda_runtime_version;\n  local: *;\n};\n"
                % "\n".join("    %s;" % e for e in exports))


def main():
    if len(sys.argv) < 3:
        die("usage: gen.py CUDA_INC OUTDIR HANDWRITTEN.c... | gen.py --check UNSUPPORTED.txt HANDWRITTEN.c...")
    check = sys.argv[1] == "--check"
    list_path = sys.argv[2] if check else os.path.join(HERE, "unsupported.txt")
    inc, out, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    exports = read_exports()
    hand = handwritten(srcs)
    unknown = sorted(hand - set(exports) - {"fakecuda_runtime_version"})
    if unknown:
        die("FC_EXPORT functions not in exports.txt: " + ", ".join(unknown))
    forwards = read_forwards(set(exports))
    unsupported = read_unsupported(set(exports), list_path)
    check_in_step(exports, hand, forwards, unsupported, list_path)
    if check:
        return
    os.makedirs(out, exist_ok=True)
    gen_forwards(forwards, inc, out)
    gen_driver(read_requests(), inc, out)
    gen_stubs(exports, hand | set(forwards), unsupported, inc, out)
    gen_errors(inc, out)
    gen_map(exports, out)


if __name__ == "__main__":
    main()
