/* The tables `cutrace export` writes, defined once (CTA_TABLES: each table's name and columns)
 * and written by two back ends from the same rows, so the SQLite file and the CSV files never
 * disagree: a SQLite database (cta_tables_sqlite) or a directory of gzip-compressed CSV files,
 * one per table per trace (cta_tables_csv). Tables named CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS,
 * StringIds and ENUM_* have the names, columns and units of Nsight Systems' SQLite export
 * (analyzer/SQLITE.md says which columns are filled); CUTRACE_* are cutrace's own.
 *
 * A row is an array of cta_val indexed by the table's column enum (CTA_TABLE_column, e.g.
 * CTA_KERNEL_start), all NULL unless set. Rows are written as they come (streaming): memory is the
 * back end's (at most 64 open compressed files; SQLite's page cache), not the rows'.
 * Text values are referenced, not copied, during cta_tables_put only. */
#ifndef CTA_TABLES_H
#define CTA_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* C(table, column, type): type INTEGER, REAL or TEXT. */
#define CTA_COLS_STRINGS(C, T) C(T, id, INTEGER) C(T, value, TEXT)
#define CTA_COLS_ENUM(C, T) C(T, id, INTEGER) C(T, name, TEXT) C(T, label, TEXT)
#define CTA_COLS_KERNEL(C, T)                                                                     \
    C(T, start, INTEGER) C(T, end, INTEGER) C(T, deviceId, INTEGER) C(T, contextId, INTEGER)      \
    C(T, streamId, INTEGER) C(T, correlationId, INTEGER) C(T, globalPid, INTEGER)                 \
    C(T, demangledName, INTEGER) C(T, shortName, INTEGER) C(T, mangledName, INTEGER)              \
    C(T, gridX, INTEGER) C(T, gridY, INTEGER) C(T, gridZ, INTEGER) C(T, blockX, INTEGER)          \
    C(T, blockY, INTEGER) C(T, blockZ, INTEGER) C(T, staticSharedMemory, INTEGER)                 \
    C(T, dynamicSharedMemory, INTEGER) C(T, registersPerThread, INTEGER)                         \
    C(T, endIsUpperBound, INTEGER)
#define CTA_COLS_MEMCPY(C, T)                                                                     \
    C(T, start, INTEGER) C(T, end, INTEGER) C(T, deviceId, INTEGER) C(T, contextId, INTEGER)      \
    C(T, streamId, INTEGER) C(T, correlationId, INTEGER) C(T, globalPid, INTEGER)                 \
    C(T, bytes, INTEGER) C(T, copyKind, INTEGER) C(T, srcKind, INTEGER) C(T, dstKind, INTEGER)    \
    C(T, srcDeviceId, INTEGER) C(T, dstDeviceId, INTEGER) C(T, endIsUpperBound, INTEGER)
#define CTA_COLS_MEMSET(C, T)                                                                     \
    C(T, start, INTEGER) C(T, end, INTEGER) C(T, deviceId, INTEGER) C(T, contextId, INTEGER)      \
    C(T, streamId, INTEGER) C(T, correlationId, INTEGER) C(T, globalPid, INTEGER)                 \
    C(T, value, INTEGER) C(T, bytes, INTEGER) C(T, memKind, INTEGER)                              \
    C(T, endIsUpperBound, INTEGER)
#define CTA_COLS_RUNTIME(C, T)                                                                    \
    C(T, start, INTEGER) C(T, end, INTEGER) C(T, eventClass, INTEGER) C(T, globalTid, INTEGER)    \
    C(T, correlationId, INTEGER) C(T, nameId, INTEGER) C(T, returnValue, INTEGER)                 \
    C(T, callchainId, INTEGER) C(T, layer, TEXT) C(T, siteId, INTEGER)
#define CTA_COLS_NVTX(C, T)                                                                       \
    C(T, start, INTEGER) C(T, end, INTEGER) C(T, eventType, INTEGER) C(T, rangeId, INTEGER)       \
    C(T, category, INTEGER) C(T, color, INTEGER) C(T, text, TEXT) C(T, globalTid, INTEGER)        \
    C(T, endGlobalTid, INTEGER) C(T, textId, INTEGER) C(T, domainId, INTEGER)                     \
    C(T, uint64Value, INTEGER) C(T, int64Value, INTEGER) C(T, doubleValue, REAL)                  \
    C(T, uint32Value, INTEGER) C(T, int32Value, INTEGER) C(T, floatValue, REAL)                   \
    C(T, domain, TEXT)
#define CTA_COLS_PROCESSES(C, T)                                                                  \
    C(T, globalPid, INTEGER) C(T, pid, INTEGER) C(T, host, TEXT) C(T, rank, INTEGER)              \
    C(T, command, TEXT) C(T, file, TEXT) C(T, start, INTEGER) C(T, end, INTEGER)                  \
    C(T, complete, INTEGER) C(T, ended, TEXT) C(T, gpuBusyPct, REAL) C(T, gpuIdlePct, REAL)       \
    C(T, peakVramBytes, INTEGER) C(T, topKernel, TEXT)
#define CTA_COLS_ALLOCS(C, T)                                                                     \
    C(T, time, INTEGER) C(T, globalTid, INTEGER) C(T, globalPid, INTEGER)                         \
    C(T, correlationId, INTEGER) C(T, operation, TEXT) C(T, kind, TEXT) C(T, deviceId, INTEGER)  \
    C(T, address, INTEGER) C(T, bytes, INTEGER) C(T, result, INTEGER) C(T, siteId, INTEGER)       \
    C(T, stackId, INTEGER)
#define CTA_COLS_BREAKDOWN(C, T)                                                                  \
    C(T, globalPid, INTEGER) C(T, pid, INTEGER) C(T, deviceId, INTEGER)                           \
    C(T, gpuOperations, INTEGER) C(T, gpuUntimedOperations, INTEGER) C(T, complete, INTEGER)      \
    C(T, windowStart, INTEGER) C(T, windowNs, INTEGER) C(T, gpuBusyNs, INTEGER)                   \
    C(T, gpuIdleNs, INTEGER) C(T, gpuBusyBoundedNs, INTEGER) C(T, idleInApiNs, INTEGER)           \
    C(T, idleBlockedNs, INTEGER) C(T, idleHostComputeNs, INTEGER) C(T, idleHostWaitNs, INTEGER)   \
    C(T, idleHostUnknownNs, INTEGER)
#define CTA_COLS_DIAG(C, T)                                                                       \
    C(T, id, INTEGER) C(T, diagnosis, TEXT) C(T, severity, TEXT) C(T, globalPid, INTEGER)         \
    C(T, pid, INTEGER) C(T, deviceId, INTEGER) C(T, savingNs, INTEGER) C(T, windowNs, INTEGER)    \
    C(T, message, TEXT) C(T, fix, TEXT) C(T, atStart, INTEGER) C(T, atEnd, INTEGER)

/* T(id, name, columns, per_trace): per_trace tables get one CSV file per trace; the others
 * (names and enumerations, shared by every trace) one file. */
#define CTA_TABLES(T)                                                                             \
    T(STRINGS, "StringIds", CTA_COLS_STRINGS, 0)                                                   \
    T(COPYKIND, "ENUM_CUDA_MEMCPY_OPER", CTA_COLS_ENUM, 0)                                         \
    T(MEMKIND, "ENUM_CUDA_MEM_KIND", CTA_COLS_ENUM, 0)                                             \
    T(KERNEL, "CUPTI_ACTIVITY_KIND_KERNEL", CTA_COLS_KERNEL, 1)                                    \
    T(MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY", CTA_COLS_MEMCPY, 1)                                    \
    T(MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET", CTA_COLS_MEMSET, 1)                                    \
    T(RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME", CTA_COLS_RUNTIME, 1)                                 \
    T(NVTX, "NVTX_EVENTS", CTA_COLS_NVTX, 1)                                                       \
    T(PROCESSES, "CUTRACE_PROCESSES", CTA_COLS_PROCESSES, 1)                                       \
    T(ALLOCS, "CUTRACE_ALLOCATIONS", CTA_COLS_ALLOCS, 1)                                           \
    T(BREAKDOWN, "CUTRACE_BREAKDOWN", CTA_COLS_BREAKDOWN, 1)                                       \
    T(DIAG, "CUTRACE_DIAGNOSES", CTA_COLS_DIAG, 1)

#define CTA_TAB_ENUM_(id, name, cols, per) CTA_TAB_##id,
enum { CTA_TABLES(CTA_TAB_ENUM_) CTA_TAB_N };
#undef CTA_TAB_ENUM_
/* per table: enum { CTA_KERNEL_start, CTA_KERNEL_end, ..., CTA_KERNEL_NCOLS } */
#define CTA_COL_ENUM_(t, n, ty) CTA_##t##_##n,
#define CTA_TAB_COLS_(id, name, cols, per) enum { cols(CTA_COL_ENUM_, id) CTA_##id##_NCOLS };
CTA_TABLES(CTA_TAB_COLS_)
#undef CTA_TAB_COLS_
#undef CTA_COL_ENUM_

typedef struct {
    enum { CTA_V_NULL, CTA_V_INT, CTA_V_REAL, CTA_V_TEXT } kind;
    int64_t i;
    double d;
    const char *s;
} cta_val;
static inline cta_val cta_vi(int64_t i) { return (cta_val){.kind = CTA_V_INT, .i = i}; }
static inline cta_val cta_vr(double d) { return (cta_val){.kind = CTA_V_REAL, .d = d}; }
static inline cta_val cta_vs(const char *s) { return s ? (cta_val){.kind = CTA_V_TEXT, .s = s} : (cta_val){0}; }

const char *cta_table_name(int table);
int cta_table_ncols(int table);
const char *cta_table_col(int table, int col);
const char *cta_table_type(int table, int col);
int cta_table_per_trace(int table);
/* The CREATE TABLE statement of a table, into buf, in SQLite's types or (engines) in the
 * types DuckDB and Spark SQL name BIGINT, DOUBLE and STRING; returns buf. */
const char *cta_table_create_sql(int table, int engines, char *buf, size_t len);

typedef struct cta_tables cta_tables;
/* Creates the database at path (replacing it once complete: rows go to a temporary file beside
 * it, renamed over path by cta_tables_close). NULL after printing why on stderr. */
cta_tables *cta_tables_sqlite(const char *path);
/* Creates dir (it must be new or empty) with dir/schema.sql (every table's CREATE TABLE, in the
 * engines' types) and, as rows come, dir/TABLE/trace-N.csv.gz (per_trace tables; N the trace's
 * index, CUTRACE_PROCESSES.file names it) or dir/TABLE/all.csv.gz, with a header line. NULL
 * after printing why. */
cta_tables *cta_tables_csv(const char *dir);
/* Writes a row of table for trace `file` (ignored by SQLite: globalPid says it). Returns 0, or
 * -1 after printing why (the export failed: close with ok 0). */
int cta_tables_put(cta_tables *t, int table, uint32_t file, const cta_val *row);
/* The id of a string in StringIds, adding its row the first time. -1 on failure (printed). */
int64_t cta_tables_string(cta_tables *t, const char *s);
/* Every row of trace `file` is written: CSV gives each table it has no rows in a file with the
 * header alone, so that every trace has every table (an engine's glob finds them all). */
int cta_tables_trace_done(cta_tables *t, uint32_t file);
/* SQL run at the end (SQLite only: views); ignored by CSV. Returns 0 or -1 (printed). */
int cta_tables_exec(cta_tables *t, const char *sql);
/* Finishes (ok) or abandons (!ok, removing what was written) the output; returns 0 when
 * everything was written. */
int cta_tables_close(cta_tables *t, int ok);
/* Rows written so far, all tables. */
uint64_t cta_tables_rows(const cta_tables *t);

#endif
