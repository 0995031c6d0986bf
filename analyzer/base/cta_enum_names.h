/* The names NVIDIA's headers give enum values the analyzer prints: the error a failed call
 * returned (by the layer of its API), cuBLAS compute types. Generated from the CUDA toolkit's
 * headers at build time (analyzer/gen/gen_enums.py), so a toolkit's new values are named.
 *
 * Contract: each returns the value's name, or NULL for a value the headers do not name (a newer
 * toolkit's, a corrupt record's); the caller then prints the number. */
#ifndef CTA_ENUM_NAMES_H
#define CTA_ENUM_NAMES_H

const char *cta_cuda_error_name(int value);     /* cudaError_t: "cudaErrorInsufficientDriver" */
const char *cta_cu_result_name(int value);      /* CUresult: "CUDA_ERROR_OUT_OF_MEMORY" */
const char *cta_cublas_status_name(int value);  /* cublasStatus_t: "CUBLAS_STATUS_NOT_SUPPORTED" */
const char *cta_cublas_compute_name(int value); /* cublasComputeType_t: "CUBLAS_COMPUTE_32F" */

#endif
