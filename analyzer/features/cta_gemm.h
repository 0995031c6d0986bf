/* Matrix products of cuBLAS and cuBLASLt (GEMM records, FORMAT.md 4.3): per shape and type,
 * calls, FLOPs, the GPU time of the kernels the calls launched, achieved TFLOP/s, arithmetic
 * intensity and the roofline verdict against the device's dense peak for that data type.
 *
 * Definitions (the roofline of NERSC's "Roofline model", as the course material in the seeds
 * states it): FLOPs of a call = 2·m·n·k·batch, a complex multiply-add counting as 4 real ones
 * (so 8·m·n·k·batch); bytes moved = A, B and C read plus D (C) written once, batch times, at
 * their element sizes; arithmetic intensity = FLOPs / bytes moved; machine balance (the ridge
 * point) = peak FLOP/s / peak memory bandwidth (DEVICE record: 2 transfers per memory clock ×
 * bus width); a shape whose intensity is at or above the ridge is compute-bound, below it
 * memory-bound. GPU time: the GPU records of the kernels whose launch nests in the call
 * (correlation parents; a GEMM call nested in another one, as cuBLAS calling cuBLASLt, counts
 * for the outermost), so TFLOP/s = FLOPs of the calls that have GPU time / that time.
 *
 * Dense peaks (NVIDIA's datasheets; cta_gemm.c's table and README.md "GEMM roofline" list the
 * numbers): H100 SXM, A100, V100 SXM2, T4; any other device, or a data type its datasheet does
 * not give, is "peak unknown".
 *
 * Contract: the model feeds cta_gemm_api (library API records, with the corrs of the calls that
 * nested in them on that thread since its previous top-level call) and cta_gemm_rec (GEMM
 * records) during the pass; cta_gemm_gpu then takes every GPU record in a second pass over the
 * same files (a kernel's GPU record may come before the call it nests in), after which
 * cta_gemm_rows computes the table both renderings show. */
#ifndef CTA_GEMM_H
#define CTA_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "cttrace.h"
#include "cta_feature.h"
#include "cta_feature_slots.h"

typedef struct cta_gemms cta_gemms;

cta_gemms *cta_gemm_new(void);
void cta_gemm_free(cta_gemms *g);
/* Moves src's calls (of other files than dst's) into dst (cta_model_merge). */
void cta_gemm_merge(cta_gemms *dst, cta_gemms *src);
void cta_gemm_api(cta_gemms *g, uint32_t file, const ct_rec_api *a, const char *name,
                 const uint64_t *nested, size_t nnested);
void cta_gemm_rec(cta_gemms *g, uint32_t file, const ct_rec_gemm *r);
void cta_gemm_gpu(cta_gemms *g, uint32_t file, const ct_rec_gpu *r, uint64_t end);

typedef struct {
    const char *api;              /* the cuBLAS function */
    const char *device;           /* its kernels' device name, "" if none ran */
    ct_rec_gemm shape;            /* m, n, k, batch, types, compute type, transposes */
    uint64_t calls;               /* successful top-level calls */
    uint64_t timed_calls;         /* of those, calls with GPU time */
    uint64_t kernels;             /* kernels with a GPU record */
    uint64_t gpu_ns;
    double flops;                 /* per call */
    double bytes;                 /* per call, 0 if an element size is unknown */
    double tflops;                /* achieved, 0 without GPU time */
    double intensity;             /* FLOPs per byte, 0 if bytes unknown */
    const char *peak_name;        /* "FP32", "FP16 tensor core", ...; NULL: peak unknown */
    double peak_tflops;
    double mem_gbps;              /* device memory bandwidth, 0 if unknown */
    double ridge;                 /* FLOPs per byte; 0 if unknown */
    const char *verdict;          /* "compute-bound", "memory-bound", or NULL (peak unknown) */
} cta_gemm_row;

/* The rows (by total GPU time, then FLOPs; caller frees *rows), and their count. devices: for
 * (file, device ordinal) the DEVICE record and name, NULL if unknown. */
typedef const ct_rec_device *(*cta_gemm_devfn)(void *ctx, uint32_t file, uint32_t device,
                                              const char **name);
size_t cta_gemm_rows(const cta_gemms *g, cta_gemm_devfn dev, void *ctx, cta_gemm_row **rows);
/* The dense peak of a device (by name) for a product of these types, in TFLOP/s; 0 when NVIDIA's
 * datasheet for that device gives none (*what then NULL). */
double cta_gemm_peak(const char *device, const ct_rec_gemm *s, const char **what);
/* Element size in bytes of a cudaDataType_t, 0 if unknown. */
unsigned cta_gemm_elem_bytes(uint32_t type);
/* "FP32", "FP16", "C64" ... for a cudaDataType_t ("type N" for others, into buf). */
const char *cta_gemm_type_name(uint32_t type, char *buf, size_t n);

/* The feature (cta_features.c; cta_gemm_report.c): GEMM records and library calls with their
 * nested calls, GPU records in the second pass (cta_feature.pass2_*), then the rows in the
 * summary after the kernel tables (text and JSON "gemm", always present, [] when none). */
extern const cta_feature cta_gemm_feature;

#endif
