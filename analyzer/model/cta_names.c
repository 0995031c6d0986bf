/* What the model's names, stacks and device properties look like to the user; the contract is
 * cta_names.h. */
#include "cta_names.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a frame is CUDA's or cutrace's rather than the user's: by its module where known,
 * else by its function's name. */
static int frame_not_user(const char *fn, const char *mod)
{
    const char *base = strrchr(mod, '/');
    base = base ? base + 1 : mod;
    if (*base)
        return !strncmp(base, "libcudart", 9) || !strncmp(base, "libcuda.", 8) ||
               !strncmp(base, "libcutrace", 10);
    return !strncmp(fn, "ct_", 3) || !strncmp(fn, "cuda", 4) || !strncmp(fn, "__cuda", 6) ||
           (fn[0] == 'c' && fn[1] == 'u' && fn[2] >= 'A' && fn[2] <= 'Z');
}

/* Whether a Python source file is the user's rather than the interpreter's: not frozen or
 * generated code ("<frozen ...>", "<string>"), not an installed package (in a directory named
 * site-packages or dist-packages, the names site.py gives every site directory: a virtual
 * environment's, the user's, Debian's), and not the standard library, which lies under the lib
 * directory of one of the installation's prefixes, from the process's PYTHON record (the module
 * search path it also records starts with PYTHONPATH's entries, often the user's own code); a
 * trace without one (before format 1.4) has only the lib/python3 directory name to go by. */
static int py_file_is_user(const cta_python *py, const char *file)
{
    if (!*file || *file == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
        return 0;
    if (!py->version)
        return !strstr(file, "/lib/python3");
    const char *prefixes[] = {py->prefix, py->exec_prefix};
    for (size_t i = 0; i < 2; i++) {
        char lib[600];
        int n = snprintf(lib, sizeof lib, "%s/lib/", prefixes[i]);
        if (prefixes[i][0] && !strncmp(file, lib, (size_t)n))
            return 0;
    }
    return 1;
}

/* The index in frames of the innermost Python frame in user code, *fr that frame and *file its
 * source file; -1 if the stack has none. */
static int py_user_frame(const cta_model *m, const cta_proc *p, const uint32_t *frames, uint32_t n,
                         ct_rec_frame *fr, const char **file, char tmp[CT_STRTMP])
{
    for (uint32_t i = 0; i < n; i++) {
        if (ct_reader_frame(m->rd, p->file, frames[i], fr) != 0 || fr->kind != CT_FRAME_PYTHON)
            continue;
        *file = fr->module ? ct_reader_str(m->rd, p->file, fr->module, tmp) : "";
        if (py_file_is_user(&p->python, *file))
            return (int)i;
    }
    return -1;
}

/* The innermost Python frame in user code as "file:line in function" (the file's base name);
 * 0 if the stack has none. */
static int py_site(const cta_model *m, const cta_proc *p, const uint32_t *frames, uint32_t n,
                   char *buf, size_t len)
{
    ct_rec_frame fr = {0};
    char tmp[CT_STRTMP], tmp2[CT_STRTMP];
    const char *file;
    if (py_user_frame(m, p, frames, n, &fr, &file, tmp2) < 0)
        return 0;
    const char *base = strrchr(file, '/');
    snprintf(buf, len, "%s:%u in %s", base ? base + 1 : file, fr.line,
             ct_reader_str(m->rd, p->file, fr.function, tmp));
    return 1;
}

int cta_model_py_site(const cta_model *m, const cta_proc *p, uint32_t stack, char *buf, size_t len)
{
    const uint32_t *frames;
    uint32_t n;
    if (stack == 0 || stack >= p->nstacks ||
        ct_reader_stack(m->rd, p->file, p->stack_ids[stack], &frames, &n) != 0)
        return 0;
    return py_site(m, p, frames, n, buf, len);
}

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && !strcmp(s + n - k, end);
}

/* Whether a Python frame is PyTorch turning a tensor into text (format(), str(), repr(),
 * print(): Tensor.__format__ reads a 0-d tensor with .item(), _tensor_str copies it to the host):
 * the user's line formats a GPU tensor. */
static int torch_formats(const char *file, const char *fn)
{
    return ends_with(file, "torch/_tensor_str.py") ||
           (ends_with(file, "torch/_tensor.py") &&
            (ends_with(fn, "__format__") || ends_with(fn, "__repr__") || ends_with(fn, "__str__")));
}

/* The PyTorch method a stack's native frames show under the Python line: the first frame, from
 * the innermost, whose function names one (libtorch's and libtorch_python's demangled names);
 * none when the first Python frame is not the user's (a library's Python code made the call). */
static int torch_op_of(const cta_model *m, const cta_proc *p, uint32_t stack)
{
    static const struct {
        const char *in;
        int op;
    } ops[] = {{"_local_scalar_dense", CTA_TORCH_ITEM}, {"THPVariable_item(", CTA_TORCH_ITEM},
               {"THPVariable_cuda(", CTA_TORCH_CUDA}, {"THPVariable_to(", CTA_TORCH_TO},
               {"at::native::to(", CTA_TORCH_COPY}, {"at::native::_to_copy(", CTA_TORCH_COPY},
               {"at::native::copy_(", CTA_TORCH_COPY}};
    const uint32_t *frames;
    uint32_t n;
    if (stack == 0 || stack >= p->nstacks ||
        ct_reader_stack(m->rd, p->file, p->stack_ids[stack], &frames, &n) != 0)
        return CTA_TORCH_NONE;
    int found = CTA_TORCH_NONE;
    for (uint32_t i = 0; i < n; i++) {
        ct_rec_frame fr = {0};
        char tmp[CT_STRTMP];
        if (ct_reader_frame(m->rd, p->file, frames[i], &fr) != 0)
            continue;
        if (fr.kind == CT_FRAME_PYTHON) {
            char tmp2[CT_STRTMP];
            const char *file = fr.module ? ct_reader_str(m->rd, p->file, fr.module, tmp2) : "";
            if (py_file_is_user(&p->python, file))
                return found;
            return found != CTA_TORCH_NONE && torch_formats(file, ct_reader_str(m->rd, p->file, fr.function, tmp))
                       ? CTA_TORCH_FORMAT : CTA_TORCH_NONE;
        }
        const char *fn = ct_reader_str(m->rd, p->file, fr.function, tmp);
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
            /* the Python method's own binding, outermost, names it best: .cuda() over the
             * copy_ it makes */
            if (strstr(fn, ops[k].in) && (found == CTA_TORCH_NONE || found == CTA_TORCH_COPY))
                found = ops[k].op;
    }
    return CTA_TORCH_NONE; /* no Python frame: no line to name */
}

int cta_model_torch_op(const cta_model *m, const cta_proc *p, const cta_stackset *s)
{
    if (!p->torch || !s->n || s->more)
        return CTA_TORCH_NONE;
    int op = torch_op_of(m, p, s->ids[0]);
    for (uint32_t i = 1; i < s->n; i++)
        if (torch_op_of(m, p, s->ids[i]) != op)
            return CTA_TORCH_NONE; /* the site's paths disagree: name none */
    return op;
}

uint32_t cta_model_site_group(const cta_model *m, cta_proc *p, uint32_t stack)
{
    if (stack == 0 || stack >= p->nstacks)
        return stack;
    if (stack < p->site_group_cap && p->site_group[stack])
        return p->site_group[stack];
    uint32_t g = stack;
    const uint32_t *frames;
    uint32_t n;
    ct_rec_frame fr = {0};
    const char *file;
    char tmp[CT_STRTMP], tmp2[CT_STRTMP];
    if (ct_reader_stack(m->rd, p->file, p->stack_ids[stack], &frames, &n) == 0 &&
        py_user_frame(m, p, frames, n, &fr, &file, tmp) >= 0) {
        /* the full path, not the base name shown: two train.py of two packages stay apart */
        char key[1200];
        int k = snprintf(key, sizeof key, "%s%c%u%c%s", file, 0, fr.line, 0,
                         ct_reader_str(m->rd, p->file, fr.function, tmp2));
        int added;
        uint32_t i = cta_map_get(&p->site_keys, key, k < (int)sizeof key ? (size_t)k : sizeof key - 1,
                                 &added);
        if (added) {
            cta_grow(&p->site_first, &p->site_first_cap, i + 1, sizeof *p->site_first);
            p->site_first[i] = stack;
        }
        g = p->site_first[i];
    }
    cta_grow(&p->site_group, &p->site_group_cap, stack + 1, sizeof *p->site_group);
    p->site_group[stack] = g;
    return g;
}

void cta_stackset_add(cta_stackset *s, uint32_t stack)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->ids[i] == stack)
            return;
    if (s->n < CTA_SITE_STACKS)
        s->ids[s->n++] = stack;
    else
        s->more = 1;
}

const char *cta_model_site(const cta_model *m, const cta_proc *p, uint32_t stack, char *call,
                          size_t clen, char *buf, size_t len, int max_frames)
{
    assert(len > 0);
    buf[0] = 0;
    if (call && clen)
        call[0] = 0;
    if (stack == 0 || stack >= p->nstacks)
        return buf;
    const uint32_t *frames;
    uint32_t n;
    if (ct_reader_stack(m->rd, p->file, p->stack_ids[stack], &frames, &n) != 0) {
        snprintf(buf, len, "<stack %u>", p->stack_ids[stack]);
        return buf;
    }
    size_t o = 0;
    int shown = 0;
    for (uint32_t i = 0; i < n && shown < max_frames && o + 1 < len; i++) {
        ct_rec_frame fr = {0};
        char tmp[CT_STRTMP], tmp2[CT_STRTMP];
        const char *fn = "?", *mod = "";
        int named = 0;
        if (ct_reader_frame(m->rd, p->file, frames[i], &fr) == 0) {
            fn = ct_reader_str(m->rd, p->file, fr.function, tmp);
            mod = fr.module ? ct_reader_str(m->rd, p->file, fr.module, tmp2) : "";
            named = *fn != 0;
        }
        const char *base = strrchr(mod, '/');
        base = base ? base + 1 : mod;
        /* the tracer's and the CUDA libraries' frames say nothing to the user; the outermost of
         * them is the function the user called */
        if (shown == 0 && frame_not_user(fn, mod)) {
            if (call && clen && named)
                snprintf(call, clen, "%s", cta_api_display_name(fn));
            continue;
        }
        char at[80] = "";
        if (fr.kind == CT_FRAME_PYTHON)
            snprintf(at, sizeof at, " (%.40s:%u)", base, fr.line);
        else if (!named)
            snprintf(at, sizeof at, "%.40s+0x%llx", base, (unsigned long long)fr.offset);
        else if (*base && fr.offset) /* the module offset tells apart sites in one function */
            snprintf(at, sizeof at, " (%.40s+0x%llx)", base, (unsigned long long)fr.offset);
        /* a C++ template instance's name runs to thousands of characters: cut, so that a stack
         * keeps its frames down to the Python ones; one the trace holds cut keeps its marker */
        size_t flen = named ? strlen(fn) : 0, keep = flen;
        uint64_t full;
        char mark[CT_STRING_CUT_MAX] = "";
        if (flen > CTA_FRAME_NAME_MAX && ct_string_cut_at(fn, flen, &full) < flen)
            keep = ct_string_cut(fn, flen, CTA_FRAME_NAME_MAX, mark);
        else if (flen > CTA_FRAME_NAME_MAX)
            keep = CTA_FRAME_NAME_MAX, strcpy(mark, "...");
        int w = snprintf(buf + o, len - o, "%s%.*s%s%s", shown ? " <- " : "", (int)keep,
                         named ? fn : "", mark, at);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
        shown++;
        if (fr.kind != CT_FRAME_PYTHON && !strcmp(fn, "main"))
            break; /* what runs main (libc, _start) says nothing either */
    }
    /* a diagnosis names the Python line that made the call; the stack text keeps every frame */
    if (call)
        py_site(m, p, frames, n, buf, len);
    return buf;
}

const char *cta_api_display_name(const char *name)
{
    /* what nvcc 13 generates for kernel<<<...>>> (FORMAT.md: the tracer records the function
     * it intercepted; ../shared/reference/nvcc-13.0-host-abi.txt) */
    if (!strncmp(name, "__cudaLaunchKernel", 18) && (!name[18] || !strcmp(name + 18, "_ptsz")))
        return "cudaLaunchKernel";
    return name;
}

/* libstdc++'s demangler (the analyzer links -lstdc++; the tracer stays free of it) */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

const char *cta_kernel_display_name(const char *name, char *buf, size_t len)
{
    if (name[0] != '_' || name[1] != 'Z')
        return name;
    int status = 0;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (!d || status != 0) {
        free(d);
        return name; /* not a valid mangled name: shown as recorded */
    }
    snprintf(buf, len, "%s", d);
    free(d);
    return buf;
}

double cta_dev_mem_peak(const ct_rec_device *d)
{
    /* DDR: two transfers per memory clock */
    return (double)d->mem_clock_khz * 1e3 * 2.0 * (double)d->mem_bus_bits / 8.0;
}

double cta_dev_link_peak(const ct_rec_device *d)
{
    /* usable bytes/s per PCIe lane after line encoding, by generation */
    static const double lane[] = {0, 0.25e9, 0.5e9, 0.985e9, 1.969e9, 3.938e9, 7.563e9};
    if (d->link_kind != CT_LINK_PCIE && d->link_kind != CT_LINK_UNKNOWN)
        return 0;
    if (d->link_gen == 0 || d->link_gen >= sizeof lane / sizeof *lane)
        return 0;
    return lane[d->link_gen] * (double)d->link_width;
}
