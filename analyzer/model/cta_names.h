/* What the model's names, stacks and device properties look like to the user (cta_names.c): call
 * sites, display names of API functions and kernels, peak bandwidths. Read-only over the model,
 * off the per-record path (a name is shown once, when first seen). */
#ifndef CTA_NAMES_H
#define CTA_NAMES_H

#include "cta_model_int.h" /* cta_model.h, through the model's internal header (there) */

/* Adds a stack index to a call site's set (the first CTA_SITE_STACKS distinct ones). */
void cta_stackset_add(cta_stackset *s, uint32_t stack);
/* A call site from a process's stack (index from cta_holder.stack etc.): `call` (may be NULL)
 * gets the CUDA function the user's code called (the outermost frame of CUDA's libraries or
 * cutrace at the top of the stack, "" if none); buf gets the user's frames from the caller
 * outwards, joined by " <- ", at most max_frames (each name cut at CTA_FRAME_NAME_MAX), ending
 * at main; "" for no stack. Frames of libcudart, libcuda and libcutrace (by module, or by name
 * where the module is unknown) are not the user's. A Python frame shows as "function (file:line)". With call non-NULL, a stack with
 * Python frames gives instead the innermost Python frame in user code (not the standard library
 * or site-packages), as "file:line in function". Returns buf. */
const char *cta_model_site(const cta_model *m, const cta_proc *p, uint32_t stack, char *call,
                          size_t clen, char *buf, size_t len, int max_frames);
/* The frames of a full stack in the JSON and the timeline: more than the tracer records natively
 * (CTP_STACK_DEPTH, 48), as Python frames are spliced in; each function name in a stack text is
 * cut at CTA_FRAME_NAME_MAX characters ("..." added), so 64 frames fit in CTA_FULL_STACK_LEN. */
#define CTA_FULL_STACK_FRAMES 64
#define CTA_FRAME_NAME_MAX 200
#define CTA_FULL_STACK_LEN 20000
/* A call site as shown to people (the VRAM holders, an OOM's failing call): the innermost Python
 * frame in user code as "file:line in function", else the user's native frames
 * (cta_model_stack_text). */
static inline const char *cta_model_site_text(const cta_model *m, const cta_proc *p, uint32_t stack,
                                             char *buf, size_t len, int max_frames)
{
    char call[8];
    return cta_model_site(m, p, stack, call, sizeof call, buf, len, max_frames);
}
/* The innermost Python frame in user code of a stack, "file:line in function" (the file's base
 * name), into buf; 0 (buf unchanged) if it has none. Which frames are the user's is decided by
 * one function (py_file_is_user in cta_names.c). */
int cta_model_py_site(const cta_model *m, const cta_proc *p, uint32_t stack, char *buf, size_t len);
/* The PyTorch method that made a site's calls, from the native frames between the CUDA call and
 * the first Python frame, when that frame is the user's (the site's line): .item() (a
 * _local_scalar_dense or THPVariable_item frame), .cuda() (THPVariable_cuda), .to()
 * (THPVariable_to), a tensor copy of unknown method (at::native::to, _to_copy, copy_ only); or,
 * when that frame is PyTorch turning a tensor into text (Tensor.__format__, __repr__, __str__,
 * torch/_tensor_str.py) over one of those, the user's line formatting a GPU tensor. NONE
 * unless PyTorch was loaded (cta_proc.torch), and unless every stack of the site shows the same
 * (a site with more stacks than listed names none). */
enum { CTA_TORCH_NONE, CTA_TORCH_ITEM, CTA_TORCH_CUDA, CTA_TORCH_TO, CTA_TORCH_COPY, CTA_TORCH_FORMAT };
int cta_model_torch_op(const cta_model *m, const cta_proc *p, const cta_stackset *s);
/* The call site of stack index `stack`: the first stack index of p whose innermost Python frame in
 * user code is the same file (full path), line and function; the stack itself when it has no such
 * frame (native stacks stay apart). Diagnoses and VRAM holders count per site, so that two native
 * paths to one Python line are one row. Looked up once per stack (cached in p), through the reader,
 * so the stack must be resolvable (it is once a record that uses it was read). */
uint32_t cta_model_site_group(const cta_model *m, cta_proc *p, uint32_t stack);
static inline const char *cta_model_stack_text(const cta_model *m, const cta_proc *p, uint32_t stack,
                                              char *buf, size_t len, int max_frames)
{
    return cta_model_site(m, p, stack, NULL, 0, buf, len, max_frames);
}
/* Peak bandwidths in bytes/s derived from the device's properties (0 if unknown). */
double cta_dev_mem_peak(const ct_rec_device *d);
double cta_dev_link_peak(const ct_rec_device *d);
/* The name to show for a function the tracer recorded: nvcc's internal entry points under the
 * name the user wrote (__cudaLaunchKernel, __cudaLaunchKernel_ptsz: cudaLaunchKernel); else name
 * itself. */
const char *cta_api_display_name(const char *name);
/* A kernel name as the user wrote it: an Itanium-mangled name (_Z...) demangled into buf
 * (libstdc++'s __cxa_demangle), else name itself. */
const char *cta_kernel_display_name(const char *name, char *buf, size_t len);
#endif
