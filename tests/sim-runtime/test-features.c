/* The runtime API beyond plain launches and copies: features.cu (device variables, launches with a
 * configuration, cooperative launches, occupancy, stream capture and graphs) on our runtime and on
 * NVIDIA's; the list of what is not simulated (unsupported.txt) kept in step with NVIDIA's
 * exports and the code; and, in process, graphs built node by node, device selection, 3D copies
 * and fills, managed-memory hints and cache preferences, each checked against the CPU. */
#define _GNU_SOURCE
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fatbinary_section.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

/* symbol_size: coef is 4 floats; initial: counter's initializer in the image; after_bump: two
 * launches of one thread, each adding 1 through the address cudaGetSymbolAddress gave;
 * blocks_per_sm: an H100 SM holds 2048 threads, 8 blocks of 256 (saxpy needs few registers and
 * no shared memory); nodes: the three captured launches; capture_ran: elements the capture
 * changed (a captured launch must not run). */
#define FEATURES_OUT                                                                                   \
    "features n=1000 symbol_size=16 initial=42 after_bump=44 mismatches=0 blocks_per_sm=8 nodes=3 " \
    "capture_ran=0 graph_launches=2\n"

TEST_IMPL(features_program_results)
{
    const char *progs[] = {"features", "features-ptds"};
    for (int i = 0; i < 2; i++) {
        ctt_proc p;
        ASSERT_INT(simrt_run(&p, progs[i], NULL, 0, NULL), ==, 0);
        ASSERT_STR(p.err, "");
        ASSERT_INT(p.code, ==, 0);
        ASSERT_STR(p.out, FEATURES_OUT);
        ctt_proc_free(&p);
    }
    return 0;
}

/* NVIDIA's runtime over the simulated driver prints the same line for the same program. */
TEST_IMPL(features_same_on_nvidia_runtime)
{
    if (access(SIMRT_NV_CUDART, R_OK) != 0)
        ctt_skip("NVIDIA's libcudart.so.13 (" SIMRT_NV_CUDART ") is not installed");
    const char *args[] = {"--any-runtime", NULL};
    ctt_proc p;
    if (simrt_run_nvidia(&p, "features", args))
        return 1;
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.out, FEATURES_OUT);
    ctt_proc_free(&p);
    return 0;
}

/* gen.py --check LIST: the list against exports.txt and the hand-written sources. */
static int fc_gen_check(ctt_proc *p, const char *list)
{
    char hand[8192];
    snprintf(hand, sizeof hand, "%s", SIMRT_HANDWRITTEN);
    char *argv[16] = {SIMRT_PYTHON, SIMRT_RUNTIME_DIR "/gen.py", "--check", (char *)list};
    int n = 4;
    for (char *tok = strtok(hand, " "); tok && n < 15; tok = strtok(NULL, " "))
        argv[n++] = tok;
    argv[n] = NULL;
    return ctt_run(p, argv, NULL, 60);
}

static cudaError_t fc_error_named(const char *name)
{
    for (int e = 0; e < 1000; e++)
        if (strcmp(cudaGetErrorName((cudaError_t)e), name) == 0)
            return (cudaError_t)e;
    return (cudaError_t)-1;
}

/* Every export is implemented or listed, never both (gen.py --check, which also fails on a
 * planted mismatch of each kind); every listed function, called, returns its listed error,
 * records it, and with FAKECUDA_TRACE_UNSUPPORTED names itself and the listed reason. */
TEST_IMPL(unsupported_list_in_step)
{
    if (simrt_setup(NULL))
        return 1;
    const char *list = SIMRT_RUNTIME_DIR "/unsupported.txt";
    ctt_proc p;
    ASSERT_INT(fc_gen_check(&p, list), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);

    char *text = ctt_read_file(list, NULL);
    ASSERT(text != NULL);
    char planted[4096];
    snprintf(planted, sizeof planted, "%s/planted.txt", ctt_tmpdir());
    FILE *f = fopen(planted, "w");
    ASSERT(f != NULL);
    fprintf(f, "%scudaMalloc cudaErrorNotSupported planted\n", text);
    fclose(f);
    ASSERT_INT(fc_gen_check(&p, planted), ==, 0);
    ASSERT_INT(p.code, !=, 0);
    ASSERT_CONTAINS(p.err, "hand-written (FC_EXPORT): cudaMalloc");
    ctt_proc_free(&p);

    setenv("FAKECUDA_TRACE_UNSUPPORTED", "1", 1);
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", ctt_tmpdir());
    int nlisted = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char name[128], err[128];
        int used = 0;
        ASSERT_INT(sscanf(line, "%127s %127s %n", name, err, &used), ==, 2);
        const char *why = line + used;
        cudaError_t want = fc_error_named(err);
        ASSERT_INT(want, !=, -1);
        /* A stub takes no notice of its arguments, so calling it without any is well-defined. */
        cudaError_t (*stub)(void) = (cudaError_t(*)(void))dlsym(RTLD_DEFAULT, name);
        ASSERT(stub != NULL);
        fflush(stderr);
        int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ASSERT(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        cudaError_t got = stub();
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        ASSERT_INT(got, ==, want);
        ASSERT_INT(cudaGetLastError(), ==, want);
        char *said = ctt_read_file(errpath, NULL);
        char expect[1024];
        snprintf(expect, sizeof expect, "fakecuda libcudart.so.13: %s is not simulated (%s): %s\n", name, err, why);
        ASSERT_STR(said, expect);
        free(said);
        nlisted++;
    }
    unsetenv("FAKECUDA_TRACE_UNSUPPORTED");
    free(text);
    ASSERT_INT(nlisted, >, 0);
    return 0;
}

/* ---- graphs built node by node (the driver's cuGraphAdd*Node) ---- */

static int fc_host_runs;
static void fc_host_node(void *data)
{
    fc_host_runs += *(int *)data;
}

/* memset node -> memcpy node (device to host) -> host node, launched twice: the host buffer
 * holds the fill and the host node ran twice; the topology reads back as built. */
TEST_IMPL(graph_built_node_by_node)
{
    if (simrt_setup(NULL))
        return 1;
    enum { N = 4096 };
    unsigned char *d, host[N];
    memset(host, 0, sizeof host);
    CU(cudaMalloc((void **)&d, N));
    cudaGraph_t g;
    SIMRT_CALL_OR_SKIP(cudaGraphCreate(&g, 0), "cuGraphCreate");
    struct cudaMemsetParams ms = {.dst = d, .pitch = N, .value = 0x5a, .elementSize = 1, .width = N, .height = 1};
    cudaGraphNode_t set, copy, host_node;
    SIMRT_CALL_OR_SKIP(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms), "cuGraphAddMemsetNode");
    SIMRT_CALL_OR_SKIP(cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, host, d, N, cudaMemcpyDeviceToHost),
                       "cuGraphAddMemcpyNode");
    int step = 1;
    struct cudaHostNodeParams hp = {fc_host_node, &step};
    SIMRT_CALL_OR_SKIP(cudaGraphAddHostNode(&host_node, g, &copy, 1, &hp), "cuGraphAddHostNode");
    size_t nodes = 0, roots = 0, edges = 0;
    CU(cudaGraphGetNodes(g, NULL, &nodes));
    SIMRT_CALL_OR_SKIP(cudaGraphGetRootNodes(g, NULL, &roots), "cuGraphGetRootNodes");
    SIMRT_CALL_OR_SKIP(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges), "cuGraphGetEdges");
    ASSERT_UINT(nodes, ==, 3);
    ASSERT_UINT(roots, ==, 1);
    ASSERT_UINT(edges, ==, 2);
    enum cudaGraphNodeType type;
    SIMRT_CALL_OR_SKIP(cudaGraphNodeGetType(copy, &type), "cuGraphNodeGetType");
    ASSERT_INT(type, ==, cudaGraphNodeTypeMemcpy);
    cudaGraphExec_t exec;
    CU(cudaGraphInstantiate(&exec, g, 0));
    cudaStream_t s;
    CU(cudaStreamCreate(&s));
    CU(cudaGraphLaunch(exec, s));
    CU(cudaGraphLaunch(exec, s));
    CU(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        ASSERT_INT(host[i], ==, 0x5a);
    ASSERT_INT(fc_host_runs, ==, 2);
    CU(cudaGraphExecDestroy(exec));
    CU(cudaGraphDestroy(g));
    CU(cudaStreamDestroy(s));
    CU(cudaFree(d));
    return 0;
}

/* What nvcc's generated code declares (crt/host_runtime.h), in C. */
void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                      dim3 *bDim, dim3 *gDim, int *wSize);

static const char fc_tick_image[] = "fakecuda-module 1\nkernel _Z4tickPi 8\n";
static const __fatBinC_Wrapper_t fc_tick_wrapper = {FATBINC_MAGIC, FATBINC_VERSION,
                                                    (const unsigned long long *)fc_tick_image, NULL};

/* Stands for nvcc's host stub: only its address matters. */
static void fc_tick_stub(int *runs)
{
    (void)runs;
}

/* Extended and cooperative launches check their configuration as <<<>>> launches do. A kernel
 * node names its kernel by host stub: the driver gets the module's CUkernel, and
 * cudaGraphKernelNodeGetParams gives the stub back, with the configuration as set; an
 * executable graph's node takes new parameters. */
TEST_IMPL(kernel_by_stub_in_launches_and_nodes)
{
    if (simrt_setup(NULL))
        return 1;
    void **h = __cudaRegisterFatBinary((void *)&fc_tick_wrapper);
    __cudaRegisterFunction(h, (const char *)fc_tick_stub, (char *)"_Z4tickPi", "_Z4tickPi", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    int *runs;
    CU(cudaMalloc((void **)&runs, sizeof(int)));
    void *args[] = {&runs};
    ASSERT_INT(cudaLaunchCooperativeKernel((const void *)fc_tick_stub, (dim3){1, 1, 1}, (dim3){2048, 1, 1}, args, 0,
                                           NULL),
               ==, cudaErrorInvalidConfiguration);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidConfiguration);
    cudaLaunchConfig_t cfg = {.gridDim = {0, 1, 1}, .blockDim = {32, 1, 1}};
    ASSERT_INT(cudaLaunchKernelExC(&cfg, (const void *)fc_tick_stub, args), ==, cudaErrorInvalidConfiguration);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidConfiguration);
    cfg.gridDim.x = 2;
    CU(cudaLaunchKernelExC(&cfg, (const void *)fc_tick_stub, args));
    CU(cudaLaunchCooperativeKernel((const void *)fc_tick_stub, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, NULL));
    ASSERT_INT(cudaLaunchKernelExC(&cfg, (const void *)&cfg, args), ==, cudaErrorInvalidDeviceFunction);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDeviceFunction);
    struct cudaKernelNodeParams kp = {(void *)fc_tick_stub, {3, 1, 1}, {64, 1, 1}, 0, args, NULL};
    cudaGraph_t g;
    cudaGraphNode_t node;
    SIMRT_CALL_OR_SKIP(cudaGraphCreate(&g, 0), "cuGraphCreate");
    SIMRT_CALL_OR_SKIP(cudaGraphAddKernelNode(&node, g, NULL, 0, &kp), "cuGraphAddKernelNode");
    struct cudaKernelNodeParams back;
    SIMRT_CALL_OR_SKIP(cudaGraphKernelNodeGetParams(node, &back), "cuGraphKernelNodeGetParams");
    ASSERT(back.func == (void *)fc_tick_stub);
    ASSERT_UINT(back.gridDim.x, ==, 3);
    ASSERT_UINT(back.blockDim.x, ==, 64);
    /* a stub no module registered is the runtime's invalid device function */
    struct cudaKernelNodeParams bad = kp;
    bad.func = (void *)&kp;
    ASSERT_INT(cudaGraphKernelNodeSetParams(node, &bad), ==, cudaErrorInvalidDeviceFunction);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDeviceFunction);
    cudaGraphExec_t exec;
    CU(cudaGraphInstantiate(&exec, g, 0));
    kp.gridDim.x = 5;
    SIMRT_CALL_OR_SKIP(cudaGraphExecKernelNodeSetParams(exec, node, &kp), "cuGraphExecKernelNodeSetParams");
    CU(cudaGraphLaunch(exec, 0));
    CU(cudaDeviceSynchronize());
    CU(cudaGraphExecDestroy(exec));
    CU(cudaGraphDestroy(g));
    CU(cudaFree(runs));
    return 0;
}

/* ---- capture state in process ---- */

/* The per-thread-default-stream export, declared only under --default-stream per-thread. */
cudaError_t CUDARTAPI cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                                    unsigned long long *id_out, cudaGraph_t *graph_out,
                                                    const cudaGraphNode_t **dependencies_out,
                                                    const cudaGraphEdgeData **edgeData_out,
                                                    size_t *numDependencies_out);

/* The thread's capture mode is exchanged (global by default); a capture's info names its graph
 * and id while it lasts; what EndCapture returns is that graph, with nothing captured in it. */
TEST_IMPL(capture_mode_and_info)
{
    if (simrt_setup(NULL))
        return 1;
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CU(cudaThreadExchangeStreamCaptureMode(&mode));
    ASSERT_INT(mode, ==, cudaStreamCaptureModeGlobal);
    CU(cudaThreadExchangeStreamCaptureMode(&mode));
    ASSERT_INT(mode, ==, cudaStreamCaptureModeRelaxed);
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
    unsigned long long id = 0, id2 = 0;
    cudaGraph_t during = NULL, after = NULL;
    CU(cudaStreamGetCaptureInfo(s, &status, &id, NULL, NULL, NULL, NULL));
    ASSERT_INT(status, ==, cudaStreamCaptureStatusNone);
    CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    ASSERT_INT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), !=, cudaSuccess);
    ASSERT_INT(cudaGetLastError(), !=, cudaSuccess);
    CU(cudaStreamGetCaptureInfo(s, &status, &id, &during, NULL, NULL, NULL));
    ASSERT_INT(status, ==, cudaStreamCaptureStatusActive);
    ASSERT(id != 0);
    CU(cudaStreamGetCaptureInfo_ptsz(s, &status, &id2, NULL, NULL, NULL, NULL));
    ASSERT_UINT(id2, ==, id);
    CU(cudaStreamEndCapture(s, &after));
    ASSERT(after != NULL);
    if (during)
        ASSERT(during == after);
    size_t nodes = 1;
    CU(cudaGraphGetNodes(after, NULL, &nodes));
    ASSERT_UINT(nodes, ==, 0);
    CU(cudaStreamIsCapturing(s, &status));
    ASSERT_INT(status, ==, cudaStreamCaptureStatusNone);
    CU(cudaGraphDestroy(after));
    CU(cudaStreamDestroy(s));
    return 0;
}

/* ---- device selection ---- */

static void *fc_device_in_new_thread(void *out)
{
    *(cudaError_t *)out = cudaGetDevice((int *)out + 1);
    return NULL;
}

/* A T4 (7.5) then an H100 (9.0): cudaChooseDevice picks by compute capability, PCI bus ids
 * round-trip, and cudaSetValidDevices' first device is what a thread that never called
 * cudaSetDevice uses. */
TEST_IMPL(device_choice_pci_and_valid_devices)
{
    if (simrt_setup("t4,h100"))
        return 1;
    struct cudaDeviceProp want;
    memset(&want, 0, sizeof want);
    want.major = 9;
    int dev = -1;
    CU(cudaChooseDevice(&dev, &want));
    ASSERT_INT(dev, ==, 1);
    want.major = 7, want.minor = 5;
    CU(cudaChooseDevice(&dev, &want));
    ASSERT_INT(dev, ==, 0);
    for (int d = 0; d < 2; d++) {
        char bus[32];
        CU(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        int back = -1;
        CU(cudaDeviceGetByPCIBusId(&back, bus));
        ASSERT_INT(back, ==, d);
    }
    ASSERT_INT(cudaDeviceGetByPCIBusId(&dev, "not a bus id"), !=, cudaSuccess);
    ASSERT_INT(cudaGetLastError(), !=, cudaSuccess);
    int order[] = {1, 0};
    CU(cudaSetValidDevices(order, 2));
    int result[2] = {-1, -1};
    pthread_t t;
    ASSERT_INT(pthread_create(&t, NULL, fc_device_in_new_thread, result), ==, 0);
    ASSERT_INT(pthread_join(t, NULL), ==, 0);
    ASSERT_INT(result[0], ==, cudaSuccess);
    ASSERT_INT(result[1], ==, 1);
    int bad[] = {5};
    ASSERT_INT(cudaSetValidDevices(bad, 1), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDevice);
    CU(cudaSetValidDevices(NULL, 0));
    cudaStream_t s;
    CU(cudaSetDevice(1));
    CU(cudaStreamCreate(&s));
    CU(cudaSetDevice(0));
    CU(cudaStreamGetDevice(s, &dev));
    ASSERT_INT(dev, ==, 1);
    CU(cudaSetDevice(1));
    CU(cudaStreamDestroy(s));
    return 0;
}

/* ---- 3D allocations, copies and fills ---- */

/* A 3D box copied into the middle of a pitched 3D allocation and back, then a fill of a sub-box
 * whose slices are not contiguous: every byte compared with the same on the CPU. */
TEST_IMPL(memcpy3d_and_memset3d)
{
    if (simrt_setup(NULL))
        return 1;
    enum { W = 40, H = 6, D = 5 };
    struct cudaPitchedPtr dp;
    CU(cudaMalloc3D(&dp, (struct cudaExtent){W, H, D}));
    ASSERT_UINT(dp.pitch, >=, W);
    ASSERT_UINT(dp.ysize, ==, H);
    static unsigned char src[D][H][W], dev_image[D][H][W], back[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                src[z][y][x] = (unsigned char)(x + 7 * y + 31 * z);
    CU(cudaMemset3D(dp, 0, (struct cudaExtent){W, H, D}));
    /* a 10 x 3 x 2 box of src at (2, 1, 1) into the device at (5, 2, 3) */
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){src, W, W, H};
    p.srcPos = (struct cudaPos){2, 1, 1};
    p.dstPtr = dp;
    p.dstPos = (struct cudaPos){5, 2, 3};
    p.extent = (struct cudaExtent){10, 3, 2};
    p.kind = cudaMemcpyHostToDevice;
    CU(cudaMemcpy3D(&p));
    memset(dev_image, 0, sizeof dev_image);
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            memcpy(&dev_image[3 + z][2 + y][5], &src[1 + z][1 + y][2], 10);
    /* a fill of 4 x 2 x 3 at (0, 0, 0): rows of different slices are not adjacent (H > 2) */
    struct cudaPitchedPtr corner = dp;
    CU(cudaMemset3D(corner, 0xee, (struct cudaExtent){4, 2, 3}));
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 2; y++)
            memset(&dev_image[z][y][0], 0xee, 4);
    memset(&p, 0, sizeof p);
    p.srcPtr = dp;
    p.dstPtr = (struct cudaPitchedPtr){back, W, W, H};
    p.extent = (struct cudaExtent){W, H, D};
    p.kind = cudaMemcpyDefault;
    CU(cudaMemcpy3D(&p));
    ASSERT_INT(memcmp(back, dev_image, sizeof back), ==, 0);
    CU(cudaFree(dp.ptr));
    return 0;
}

/* A 3D box from one device's pitched allocation to another's: each side in its own device's
 * context; a device that does not exist is the runtime's invalid device, before the driver. */
TEST_IMPL(memcpy3d_peer_between_devices)
{
    if (simrt_setup("a100,a100"))
        return 1;
    enum { W = 24, H = 4, D = 3 };
    struct cudaPitchedPtr p0, p1;
    static unsigned char src[D][H][W], back[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                src[z][y][x] = (unsigned char)(3 * x + 5 * y + 11 * z);
    CU(cudaSetDevice(1));
    CU(cudaMalloc3D(&p1, (struct cudaExtent){W, H, D}));
    CU(cudaSetDevice(0));
    CU(cudaMalloc3D(&p0, (struct cudaExtent){W, H, D}));
    struct cudaMemcpy3DParms up = {.srcPtr = {src, W, W, H}, .dstPtr = p0, .extent = {W, H, D},
                                   .kind = cudaMemcpyHostToDevice};
    CU(cudaMemcpy3D(&up));
    struct cudaMemcpy3DPeerParms peer = {.srcPtr = p0, .srcDevice = 0, .dstPtr = p1, .dstDevice = 5,
                                         .extent = {W, H, D}};
    ASSERT_INT(cudaMemcpy3DPeer(&peer), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDevice);
    peer.dstDevice = 1;
    SIMRT_CALL_OR_SKIP(cudaMemcpy3DPeer(&peer), "cuMemcpy3DPeer");
    struct cudaMemcpy3DParms down = {.srcPtr = p1, .dstPtr = {back, W, W, H}, .extent = {W, H, D},
                                     .kind = cudaMemcpyDeviceToHost};
    CU(cudaSetDevice(1));
    CU(cudaMemcpy3D(&down));
    ASSERT_INT(memcmp(back, src, sizeof src), ==, 0);
    return 0;
}

/* ---- managed-memory hints, cache preferences ---- */

TEST_IMPL(managed_hints_and_cache_config)
{
    if (simrt_setup(NULL))
        return 1;
    int *m;
    CU(cudaMallocManaged((void **)&m, 1 << 20, cudaMemAttachGlobal));
    struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = 0};
    struct cudaMemLocation cpu = {.type = cudaMemLocationTypeHost, .id = 0};
    CU(cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetPreferredLocation, gpu));
    CU(cudaMemPrefetchAsync(m, 1 << 20, gpu, 0, 0));
    CU(cudaMemPrefetchAsync(m, 1 << 20, cpu, 0, 0));
    CU(cudaDeviceSynchronize());
    /* pageable memory is not managed: the documented invalid value, recorded */
    static int pageable[1024];
    ASSERT_INT(cudaMemPrefetchAsync(pageable, sizeof pageable, gpu, 0, 0), ==, cudaErrorInvalidValue);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidValue);
    CU(cudaFree(m));

    enum cudaFuncCache c = cudaFuncCachePreferNone;
    CU(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    CU(cudaDeviceGetCacheConfig(&c));
    ASSERT_INT(c, ==, cudaFuncCachePreferShared);
    CU(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
    return 0;
}

/* ---- the runtime's library API, a device's pool ---- */

/* A text-format module (the simulated driver's, see its README) through cudaLibrary*: its
 * kernels counted, enumerated and found by name, as the module lists them. */
TEST_IMPL(library_api_and_device_pool)
{
    if (simrt_setup(NULL))
        return 1;
    static const char image[] = "fakecuda-module 1\nkernel first 8 4\nkernel second 8\n";
    cudaLibrary_t lib;
    CU(cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 0;
    CU(cudaLibraryGetKernelCount(&count, lib));
    ASSERT_UINT(count, ==, 2);
    cudaKernel_t all[2], second;
    CU(cudaLibraryGetKernel(&second, lib, "second"));
    /* cuLibraryEnumerateKernels is not simulated by every driver version: checked where it is */
    cudaError_t listed = cudaLibraryEnumerateKernels(all, 2, lib);
    if (listed == cudaErrorNotSupported) {
        ASSERT_INT(cudaGetLastError(), ==, cudaErrorNotSupported);
    } else {
        CU(listed);
        ASSERT(all[0] == second || all[1] == second);
        ASSERT(all[0] != all[1]);
    }
    ASSERT_INT(cudaLibraryGetKernel(&second, lib, "third"), !=, cudaSuccess);
    ASSERT_INT(cudaGetLastError(), !=, cudaSuccess);
    CU(cudaLibraryUnload(lib));

    cudaMemPool_t current = NULL, dflt = NULL;
    CU(cudaDeviceGetMemPool(&current, 0));
    CU(cudaDeviceGetDefaultMemPool(&dflt, 0));
    ASSERT(current != NULL && current == dflt);
    ASSERT_INT(cudaDeviceGetMemPool(&current, 9), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDevice);
    return 0;
}
