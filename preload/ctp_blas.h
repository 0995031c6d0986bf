/* The recorders of cuBLAS's and cuBLASLt's GEMM entry points (called by the generated wrappers
 * of ctp_blas_wrappers.c, preload/gen/gen_wrappers.py's BLAS_GEMM table).
 *
 * Contract: like the ctp_on_* hooks of ctp_record.h: run after the real call, return at once when
 * c->th is NULL, append the call's GEMM record (FORMAT.md 4.3) whatever the call returned (its
 * API record carries the status). ctp_on_gemm only stores its arguments (the hot path's rules:
 * no lock, allocation or system call). ctp_on_gemm_lt reads the shape and types from the matmul
 * descriptor and the matrix layouts through cuBLASLt's own getters, resolved once, only after
 * a successful call (a failed call's descriptors may be invalid, and the tracer must not touch
 * what the library refused); a failed call, or a layout or attribute it cannot read, leaves the
 * record's fields 0 and sets CT_GEMM_UNREAD. */
#ifndef CTP_BLAS_H
#define CTP_BLAS_H

#include <stdint.h>

#include <cublasLt.h>

#include "ctp_state.h"

void ctp_on_gemm(ctp_call *c, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                int64_t k, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                cublasComputeType_t compute, int64_t batch);
void ctp_on_gemm_lt(ctp_call *c, cublasStatus_t r, cublasLtMatmulDesc_t desc,
                   cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t cl,
                   cublasLtMatrixLayout_t d);

#endif
