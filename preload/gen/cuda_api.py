#!/usr/bin/env python3
"""A model of the CUDA driver API, read from NVIDIA's cuda.h and cudaTypedefs.h.

Shared by the simulated driver's generator (tests/fakecuda/driver) and the tracer's wrapper
generator. Standard library only.

Terms
-----
base name   the name a program passes to cuGetProcAddress: "cuMemAlloc", "cuMemcpyHtoDAsync".
variant     one exported ABI of that function: its symbol ("cuMemAlloc_v2",
            "cuMemcpyHtoDAsync_v2_ptsz"), the CUDA version from which cuGetProcAddress returns it
            (the NNNN of the PFN_<base>_vNNNN[_ptds|_ptsz] typedef), its stream flavour
            ("" for legacy, "ptds" or "ptsz") and its prototype.

How symbols are derived
-----------------------
cudaTypedefs.h gives every variant's version and prototype but not its symbol. The legacy
(non per-thread) variants of a base name, sorted by version, follow NVIDIA's suffix
convention: the first is the base name, the i-th (1-based) is <base>_v<i> (cuMemAlloc,
cuMemAlloc_v2; cuCtxCreate .. cuCtxCreate_v4). Only when the newest such name is declared
nowhere does cuda.h's `#define <base> <target>` name it instead. A per-thread variant at
version V is the legacy variant in force at V plus "_ptds"/"_ptsz" (cuMemcpyHtoD_v2_ptds).
Every derived symbol is checked against the prototypes the headers declare (in any
preprocessor branch); mismatches are listed in Api.problems (none for CUDA 13.0).

The interop headers next to cuda.h (cudaProfiler.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h and their
typedef headers) are modelled the same way, since libcuda exports those functions too and
NVIDIA's runtime asks for them; Variant.header tells them apart.

Functions cuda.h declares without any PFN typedef would get one legacy variant at version 0
(always resolvable), since the typedefs are the only version data NVIDIA publishes; CUDA 13.0
has none.

Resolution (cuGetProcAddress, NVIDIA driver API reference)
----------------------------------------------------------
resolve(api, symbol, cuda_version, flags) picks the newest legacy variant whose version is
<= cuda_version; if a per-thread variant of that same legacy variant exists with version
<= cuda_version and flags has CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2), that one wins.
Flags 0 (DEFAULT) means legacy for the driver itself: the per-thread default comes from the
caller's compile mode, which cuda.h's inline wrapper turns into flag 2. No variant of a known
base name old enough -> "version_not_sufficient"; unknown name -> "not_found".

Public interface
----------------
load(cuda_h, typedefs_h, interop=True) -> Api
Api.functions: dict base name -> Function (sorted by base name when iterated via .sorted())
Api.symbols: dict exported symbol -> Variant
Api.problems: list of str
resolve(api, symbol, cuda_version, flags) -> Resolution(symbol or None, status)
anchor(function, per_thread_variant) -> the legacy Variant it is the per-thread form of
Function(name, variants): variants sorted by (version, stream); .legacy(), .per_thread()
Variant(symbol, base, version, stream, ret, params, header): .decl(name=None) renders the C
  prototype (under another name if given), .param_list() its parameter list, .args() the
  argument names for a forwarding call
Param(type, name)
errors(cuda_h) -> [ErrorCode(name, value, doc)]: every CUresult, with its header comment's
  first sentence

Command line: cuda_api.py --dump [--cuda-h PATH] [--typedefs-h PATH]
              cuda_api.py --resolve SYMBOL VERSION FLAGS
"""

import argparse
import dataclasses
import os
import re
import sys

DEFAULT_INCLUDE = "/usr/local/cuda/include"
PER_THREAD_FLAG = 2  # CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM


@dataclasses.dataclass(frozen=True)
class Param:
    type: str
    name: str


@dataclasses.dataclass
class Variant:
    symbol: str
    base: str
    version: int
    stream: str  # "" (legacy), "ptds" or "ptsz"
    ret: str
    params: list
    header: str  # "cuda.h", or the interop header that declares it ("cudaGL.h", ...)

    def decl(self, name=None):
        """C prototype with this variant's (or the given) name, without the trailing ';'."""
        return "%s %s(%s)" % (self.ret, name or self.symbol, self.param_list())

    def param_list(self):
        if not self.params:
            return "void"
        return ", ".join(_join_decl(p.type, p.name) for p in self.params)

    def args(self):
        return ", ".join(p.name for p in self.params)


@dataclasses.dataclass
class Function:
    name: str
    variants: list  # sorted by (version, stream)

    def legacy(self):
        return [v for v in self.variants if not v.stream]

    def per_thread(self):
        return [v for v in self.variants if v.stream]


@dataclasses.dataclass
class Api:
    functions: dict
    symbols: dict
    problems: list

    def sorted(self):
        return [self.functions[k] for k in sorted(self.functions)]


@dataclasses.dataclass(frozen=True)
class Resolution:
    symbol: object  # str or None
    status: str  # "found", "not_found", "version_not_sufficient"


def _join_decl(ctype, name):
    if ctype.endswith("*"):
        return ctype + name
    return ctype + " " + name


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _parse_params(text, where):
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    params = []
    for i, raw in enumerate(text.split(",")):
        raw = raw.strip()
        m = re.match(r"^(.*?[\s\*])(\w+)\s*(\[\s*\w*\s*\])?$", raw)
        if not m or not m.group(1).strip():
            raise ValueError("%s: parameter %d: expected 'type name', found %r" % (where, i, raw))
        ctype = re.sub(r"\s*\*\s*", "*", m.group(1).strip())
        ctype = re.sub(r"(\w)\*", r"\1 *", ctype)
        if m.group(3):  # array parameter decays to a pointer
            ctype += " *"
        params.append(Param(ctype, m.group(2)))
    return params


_TYPEDEF_RE = re.compile(r"typedef\s+(\w+)\s*\(\s*CUDAAPI\s*\*\s*PFN_(\w+)\s*\)\s*\((.*?)\)\s*;",
                         re.S)
_PROTO_RE = re.compile(r"\b(\w+)\s+CUDAAPI\s+(\w+)\s*\(([^;{}]*?)\)\s*;", re.S)
_DEFINE_RE = re.compile(r"^\s*#\s*define\s+(cu\w+)\s+(.+?)\s*$", re.M)
_VERSIONED_RE = re.compile(r"^(\w+?)_v(\d+)(?:_(ptds|ptsz))?$")


def _declared_symbols(cuda_h_text):
    """Every symbol cuda.h declares in any branch, expanded both without and with the
    per-thread macros, plus each declaration's prototype keyed by the name written."""
    defines = {}
    for name, target in _DEFINE_RE.findall(cuda_h_text):
        defines.setdefault(name, target)
    protos = {}
    for ret, name, params in _PROTO_RE.findall(cuda_h_text):
        protos.setdefault(name, (ret, params))
    declared = set()
    for name in protos:
        declared.add(name)
        target = defines.get(name, "")
        m = re.match(r"__CUDA_API_PT(DS|SZ)\((\w+)\)", target)
        if m:
            declared.add(m.group(2))
            declared.add(m.group(2) + "_pt" + m.group(1).lower())
        elif re.match(r"^\w+$", target):
            declared.add(target)
    # Names only reachable through the PTDS define block (cuMemcpy -> cuMemcpy_ptds, ...).
    for name, target in defines.items():
        m = re.match(r"__CUDA_API_PT(DS|SZ)\((\w+)\)", target)
        if m:
            declared.add(m.group(2) + "_pt" + m.group(1).lower())
    return defines, protos, declared


def _legacy_target(defines, base):
    """The symbol cuda.h binds `base` to by default (per-thread macros off)."""
    target = defines.get(base)
    if target is None:
        return base
    m = re.match(r"__CUDA_API_PT(?:DS|SZ)\((\w+)\)", target)
    if m:
        return m.group(1)
    return target if re.match(r"^\w+$", target) else base


# Interop headers that document more functions libcuda.so exports (cuGLInit, cuProfilerStart,
# cuVDPAUGetDevice, ...), each with its own typedef header. Their prototypes use GL/EGL/VDPAU
# types, so consumers may want to treat them apart: Variant.header says where each came from.
INTEROP_HEADERS = [("cudaProfiler.h", "cudaProfilerTypedefs.h"), ("cudaGL.h", "cudaGLTypedefs.h"),
                   ("cudaEGL.h", "cudaEGLTypedefs.h"), ("cudaVDPAU.h", "cudaVDPAUTypedefs.h")]


def load(cuda_h=os.path.join(DEFAULT_INCLUDE, "cuda.h"),
         typedefs_h=os.path.join(DEFAULT_INCLUDE, "cudaTypedefs.h"), interop=True):
    """The model of cuda.h + cudaTypedefs.h, plus the interop headers found next to cuda.h
    when interop is true."""
    pairs = [(cuda_h, typedefs_h)]
    if interop:
        inc = os.path.dirname(cuda_h)
        pairs += [(os.path.join(inc, h), os.path.join(inc, t)) for h, t in INTEROP_HEADERS
                  if os.path.exists(os.path.join(inc, h)) and os.path.exists(os.path.join(inc, t))]
    texts = []
    for h, t in pairs:
        with open(h) as f:
            htext = _strip_comments(f.read())
        with open(t) as f:
            ttext = _strip_comments(f.read())
        texts.append((h, t, htext, ttext))
    defines, protos, declared = _declared_symbols("\n".join(x[2] for x in texts))
    problems = []
    functions = {}
    symbols = {}
    for header, typedefs, htext, ttext in texts:
        _load_pair(os.path.basename(header), typedefs, htext, ttext, defines, declared,
                   functions, symbols, problems)

    # Functions cuda.h declares with no typedef at all.
    for name, (ret, params) in sorted(protos.items()):
        if name in symbols or name in functions or not name.startswith("cu"):
            continue
        if _legacy_target(defines, name) != name:
            continue  # an old spelling of a function whose define moved on
        if _VERSIONED_RE.match(name) or name.endswith(("_ptds", "_ptsz")):
            continue  # internal-only variant of a base name already modelled
        v = Variant(name, name, 0, "", ret, _parse_params(params, "%s: %s" % (cuda_h, name)),
                    os.path.basename(cuda_h))
        functions[name] = Function(name, [v])
        symbols[name] = v
    return Api(functions, symbols, problems)


def _load_pair(header, typedefs_h, htext, td_text, defines, declared, functions, symbols,
               problems):
    raw = {}  # base -> {(version, stream): (ret, params)}
    for ret, pfn, params in _TYPEDEF_RE.findall(td_text):
        m = _VERSIONED_RE.match(pfn)
        if not m:
            problems.append("%s: PFN_%s has no _v<version> suffix" % (typedefs_h, pfn))
            continue
        base, version, stream = m.group(1), int(m.group(2)), m.group(3) or ""
        where = "%s: PFN_%s" % (typedefs_h, pfn)
        raw.setdefault(base, {})[(version, stream)] = (ret, _parse_params(params, where))

    for base in sorted(raw):
        entries = raw[base]
        legacy_versions = sorted(v for (v, s) in entries if not s)
        if not legacy_versions:
            problems.append("%s: %s has per-thread typedefs but no legacy one" % (typedefs_h, base))
            continue
        legacy_symbol = {}
        for i, version in enumerate(legacy_versions):
            symbol = base if i == 0 else "%s_v%d" % (base, i + 1)
            if symbol not in declared and i == len(legacy_versions) - 1:
                symbol = _legacy_target(defines, base)
            legacy_symbol[version] = symbol
        variants = []
        for (version, stream), (ret, params) in sorted(entries.items()):
            if stream:
                in_force = [v for v in legacy_versions if v <= version]
                anchor = in_force[-1] if in_force else legacy_versions[0]
                symbol = legacy_symbol[anchor] + "_" + stream
            else:
                symbol = legacy_symbol[version]
            if symbol not in declared:
                problems.append("%s: derived symbol %s (PFN_%s_v%d%s) is not declared in %s"
                                % (typedefs_h, symbol, base, version,
                                   "_" + stream if stream else "", header))
            variants.append(Variant(symbol, base, version, stream, ret, params, header))
        for v in variants:
            if v.symbol in symbols:
                problems.append("%s: symbol %s derived twice (%s and %s)"
                                % (typedefs_h, v.symbol, symbols[v.symbol].base, base))
            symbols[v.symbol] = v
        functions[base] = Function(base, variants)


@dataclasses.dataclass(frozen=True)
class ErrorCode:
    name: str   # "CUDA_ERROR_OUT_OF_MEMORY"
    value: int
    doc: str    # the first sentence of cuda.h's comment on it


def errors(cuda_h=os.path.join(DEFAULT_INCLUDE, "cuda.h")):
    """Every CUresult value of cuda.h's enum cudaError_enum, in declaration order."""
    with open(cuda_h) as f:
        text = f.read()
    m = re.search(r"typedef\s+enum\s+cudaError_enum\s*\{(.*?)\}\s*CUresult\s*;", text, re.S)
    if not m:
        raise ValueError("%s: no enum cudaError_enum" % cuda_h)
    out = []
    for doc, name, value in re.findall(r"(?:/\*\*(.*?)\*/)?\s*(CUDA_\w+)\s*=\s*(\d+)", m.group(1),
                                       re.S):
        words = " ".join(w for w in re.sub(r"[*\n]", " ", doc or "").split())
        words = words.replace("::", "")
        first = re.split(r"(?<=\.)\s", words, maxsplit=1)[0] if words else name
        out.append(ErrorCode(name, int(value), first))
    return out


def resolve(api, symbol, cuda_version, flags):
    """What cuGetProcAddress(symbol, &pfn, cuda_version, flags) returns: see module doc."""
    fn = api.functions.get(symbol)
    if fn is None:
        return Resolution(None, "not_found")
    legacy = [v for v in fn.legacy() if v.version <= cuda_version]
    if not legacy:
        return Resolution(None, "version_not_sufficient")
    chosen = legacy[-1]
    if flags & PER_THREAD_FLAG:
        pt = [v for v in fn.per_thread()
              if v.version <= cuda_version and anchor(fn, v) is chosen]
        if pt:
            chosen = pt[-1]
    return Resolution(chosen.symbol, "found")


def anchor(fn, pt_variant):
    """The legacy variant a per-thread variant is the per-thread form of."""
    stem = pt_variant.symbol[: -len("_" + pt_variant.stream)]
    for v in fn.legacy():
        if v.symbol == stem:
            return v
    raise AssertionError("per-thread variant %s has no legacy variant %s" % (pt_variant.symbol, stem))


def _main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuda-h", default=os.path.join(DEFAULT_INCLUDE, "cuda.h"))
    ap.add_argument("--typedefs-h", default=os.path.join(DEFAULT_INCLUDE, "cudaTypedefs.h"))
    ap.add_argument("--dump", action="store_true", help="print every function and variant")
    ap.add_argument("--resolve", nargs=3, metavar=("SYMBOL", "VERSION", "FLAGS"))
    a = ap.parse_args(argv)
    api = load(a.cuda_h, a.typedefs_h)
    if a.resolve:
        r = resolve(api, a.resolve[0], int(a.resolve[1]), int(a.resolve[2], 0))
        print(r.symbol or "-", r.status)
        return 0
    if a.dump:
        for fn in api.sorted():
            print(fn.name)
            for v in fn.variants:
                print("  %-6d %-5s %s" % (v.version, v.stream or "-", v.decl()))
        print("# %d functions, %d symbols, %d problems" %
              (len(api.functions), len(api.symbols), len(api.problems)))
    for p in api.problems:
        print("problem: " + p, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
