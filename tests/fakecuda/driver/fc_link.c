/* The linker API (cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkDestroy),
 * which cuda-python and numba use to turn PTX into something cuModuleLoadData takes. Nothing is
 * compiled: each input is checked as cuModuleLoadData would check it on the current context's
 * device (so a bad or foreign image fails at cuLinkAdd*, as documented), and cuLinkComplete
 * hands back an image the simulation loads: the single input as given, or several PTX inputs
 * one after the other (their kernels and variables together). Linking several binary inputs
 * (cubins, fatbins, objects, libraries, NVVM) is not simulated. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>

#define FC_LINK_MAGIC 0x11c4ed01u

typedef struct fc_link_input {
    struct fc_link_input *next;
    CUjitInputType type;
    char *data; /* NUL-terminated copy */
    size_t size;
} fc_link_input;

struct CUlinkState_st {
    uint32_t magic;
    int dev;
    fc_link_input *inputs, **tail;
    int ninputs;
    char *out; /* cuLinkComplete's image, freed by cuLinkDestroy */
};

static CUresult fc_link_create(unsigned n, CUjit_option *opts, void **vals, CUlinkState *out)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!out || (n && (!opts || !vals)))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUlinkState_st *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = FC_LINK_MAGIC;
    l->dev = c->dev;
    l->tail = &l->inputs;
    *out = l;
    return CUDA_SUCCESS;
}

/* Takes ownership of data (NUL-terminated, size bytes before the NUL). */
static CUresult fc_link_add(CUlinkState l, CUjitInputType type, char *data, size_t size,
                            unsigned n, CUjit_option *opts, void **vals)
{
    CUresult r;
    if ((n && (!opts || !vals)) || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES)
        r = CUDA_ERROR_INVALID_VALUE;
    else if (type != CU_JIT_INPUT_CUBIN && type != CU_JIT_INPUT_PTX &&
             type != CU_JIT_INPUT_FATBINARY)
        r = fc_unsupported("cuLinkAdd* of an object, a library or NVVM");
    else
        r = fc_image_check(data, l->dev);
    if (r == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX && !strstr(data, ".entry") &&
        !strstr(data, ".version"))
        r = CUDA_ERROR_INVALID_PTX;
    fc_link_input *in = r == CUDA_SUCCESS ? calloc(1, sizeof *in) : NULL;
    if (!in) {
        free(data);
        return r == CUDA_SUCCESS ? CUDA_ERROR_OUT_OF_MEMORY : r;
    }
    in->type = type;
    in->data = data;
    in->size = size;
    *l->tail = in;
    l->tail = &in->next;
    l->ninputs++;
    return CUDA_SUCCESS;
}

static int fc_link_valid(CUlinkState l)
{
    return l && l->magic == FC_LINK_MAGIC;
}

static CUresult fc_link_add_data(CUlinkState l, CUjitInputType type, void *data, size_t size,
                                 unsigned n, CUjit_option *opts, void **vals)
{
    if (!fc_link_valid(l))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data || !size)
        return CUDA_ERROR_INVALID_VALUE;
    char *copy = malloc(size + 1);
    if (!copy)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(copy, data, size);
    copy[size] = 0;
    if (type == CU_JIT_INPUT_PTX) /* the PTX's own NUL counts in size */
        size = strlen(copy);
    return fc_link_add(l, type, copy, size, n, opts, vals);
}

static CUresult fc_link_add_file(CUlinkState l, CUjitInputType type, const char *path,
                                 unsigned n, CUjit_option *opts, void **vals)
{
    if (!fc_link_valid(l))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size;
    char *data = fc_read_whole(path, &size);
    if (!data)
        return CUDA_ERROR_FILE_NOT_FOUND;
    return fc_link_add(l, type, data, size, n, opts, vals);
}

FC_EXPORT CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options,
                                        void **optionValues, CUlinkState *stateOut)
{
    FC_ENTER("cuLinkCreate");
    return fc_link_create(numOptions, options, optionValues, stateOut);
}

FC_EXPORT CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                                           void **optionValues, CUlinkState *stateOut)
{
    FC_ENTER("cuLinkCreate_v2");
    return fc_link_create(numOptions, options, optionValues, stateOut);
}

FC_EXPORT CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                                         size_t size, const char *name, unsigned int numOptions,
                                         CUjit_option *options, void **optionValues)
{
    FC_ENTER("cuLinkAddData");
    (void)name;
    return fc_link_add_data(state, type, data, size, numOptions, options, optionValues);
}

FC_EXPORT CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
                                            size_t size, const char *name,
                                            unsigned int numOptions, CUjit_option *options,
                                            void **optionValues)
{
    FC_ENTER("cuLinkAddData_v2");
    (void)name;
    return fc_link_add_data(state, type, data, size, numOptions, options, optionValues);
}

FC_EXPORT CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type,
                                         const char *path, unsigned int numOptions,
                                         CUjit_option *options, void **optionValues)
{
    FC_ENTER("cuLinkAddFile");
    return fc_link_add_file(state, type, path, numOptions, options, optionValues);
}

FC_EXPORT CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
                                            const char *path, unsigned int numOptions,
                                            CUjit_option *options, void **optionValues)
{
    FC_ENTER("cuLinkAddFile_v2");
    return fc_link_add_file(state, type, path, numOptions, options, optionValues);
}

FC_EXPORT CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    FC_ENTER("cuLinkComplete");
    if (!fc_link_valid(state))
        return CUDA_ERROR_INVALID_HANDLE;
    if (!cubinOut || !sizeOut || !state->ninputs)
        return CUDA_ERROR_INVALID_VALUE;
    size_t total = 0;
    int all_ptx = 1;
    for (fc_link_input *in = state->inputs; in; in = in->next) {
        total += in->size + 1;
        all_ptx &= in->type == CU_JIT_INPUT_PTX;
    }
    if (state->ninputs > 1 && !all_ptx)
        return fc_unsupported("cuLinkComplete of several binary inputs");
    free(state->out);
    if (!(state->out = malloc(total + 1)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t n = 0;
    for (fc_link_input *in = state->inputs; in; in = in->next) {
        memcpy(state->out + n, in->data, in->size);
        n += in->size;
        state->out[n++] = '\n';
    }
    state->out[n] = 0;
    *cubinOut = state->out;
    *sizeOut = all_ptx ? n + 1 : state->inputs->size;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
    FC_ENTER("cuLinkDestroy");
    if (!fc_link_valid(state))
        return CUDA_ERROR_INVALID_HANDLE;
    state->magic = 0;
    for (fc_link_input *in = state->inputs, *next; in; in = next) {
        next = in->next;
        free(in->data);
        free(in);
    }
    free(state->out);
    free(state);
    return CUDA_SUCCESS;
}
