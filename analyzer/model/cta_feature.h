/* Features: what plugs into the model (DESIGN.md, "Adding a feature"). The model's core joins
 * calls, fills the kernel, copy and API tables and sweeps the time axis; a feature (the cuBLAS
 * products, CUDA graphs, the host's samples, NVTX ranges: analyzer/features/) adds its own state
 * and output through the hooks below, and the core names none of them. The program chooses its
 * features once, before any model is made (cta_model_plug: cli/main.c plugs the table of
 * features/cta_features.c), and each has a slot there, CTA_FEAT_MAX at most: its state hangs off
 * the model, each process and each thread at that slot (cta_model.feat, cta_proc.feat,
 * cta_thread.feat; NULL until the feature sets it). A slot whose entry is NULL is a feature left
 * out: its records are ignored and its output is absent, the rest is unchanged.
 *
 * Every hook may be NULL. The record hooks are looked up by record type once (cta_model_plug),
 * so a record costs nothing for the features that do not take its type. */
#ifndef CTA_FEATURE_H
#define CTA_FEATURE_H

#include <stdio.h>

#include "cta_model_int.h" /* cta_model.h, through the model's internal header (there) */
#include "cta_out.h"

typedef struct cta_pt cta_pt;

/* The part of a device's record a gap hook speaks of: the gaps begun in [from, to). A finding
 * of the steady state speaks of the gaps from it on, one of the start-up of those before it
 * (cta_startup_span), the breakdown of all of them. */
typedef struct {
    uint64_t from, to;
} cta_span;
#define CTA_SPAN_ALL ((cta_span){0, UINT64_MAX})

typedef struct {
    const char *name;
    /* ---- the per-record pass (cta_model_feed) ---- */
    /* Records of the types in `types` (bit 1 << CT_REC_x), before the core's own handler. */
    uint64_t types;
    void (*record)(cta_model *m, cta_proc *p, const ct_rec *r);
    /* An API record, after the core's handler, with what that found: the calling thread and the
     * function's row in the API table (cta_name_index), so that a feature reading every call
     * looks neither up again. */
    void (*api)(cta_model *m, cta_proc *p, cta_thread *th, const ct_rec *r, uint32_t idx);
    /* A library call (API flag CT_API_LIBRARY, cuBLAS): its name and, for a top-level one, the
     * correlation ids of the calls nested in it (its kernels' launches among them). */
    void (*library_call)(cta_model *m, cta_proc *p, const ct_rec *r, const char *name,
                         const uint64_t *nested, size_t nnested);
    /* A LAUNCH or COPY record of work captured into a graph: nothing ran; kidx: a launch's row
     * in the kernel table. */
    void (*captured)(cta_model *m, cta_proc *p, const ct_rec *r, uint32_t kidx);
    /* The context of a call: what is open on its thread as it is made (NVTX ranges), taken as
     * a reference (0: none) that the core keeps with the call until the call is done, then
     * drops. One feature at most provides it (cta_model_plug checks). */
    uint32_t (*ctx_ref)(cta_proc *p, cta_thread *th);
    void (*ctx_unref)(cta_model *m, cta_proc *p, uint32_t ref);
    /* A call's GPU operation [start, end] as recorded, of a call with context ref (not 0);
     * kernel: it is a kernel; start_late, end_early: the latest it can have begun, the earliest
     * ended (an operation begun before its call returned, an end that is only a bound). */
    void (*call_gpu)(cta_model *m, cta_proc *p, uint32_t ref, uint64_t start, uint64_t end,
                     int kernel, uint64_t start_late, uint64_t end_early);
    /* A GPU interval (end: its end time), with what is known of its call (c->corr only: the
     * call's records never came), as the observer's on_gpu sees it. */
    void (*gpu)(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c);
    /* Thread th blocked ns in a synchronization. */
    void (*sync)(cta_model *m, cta_proc *p, cta_thread *th, uint64_t ns);
    /* An event a diagnosis counts (kind CTA_WHERE_*), of ns, in a call with context ref (0:
     * none known). */
    void (*where)(cta_model *m, cta_proc *p, uint32_t ref, int kind, uint64_t ns);
    /* ---- the sweep (cta_sweep.c), in time order ---- */
    /* Device dev was idle ns, the host's last thread in CUDA being tid; only for a process
     * where the feature has state (cta_proc.feat). */
    void (*idle)(cta_model *m, cta_proc *p, int dev, uint32_t tid, uint64_t ns);
    /* Whether the host was loading batches during gap g of device dev, which ends with a
     * host-to-device copy, as the feature knows (the thread samples' frames): 0 no (the gap is
     * then not data loading but what else it was), 1 yes, -1 it cannot tell. One feature at
     * most answers other than -1 for a gap. */
    int (*loading)(cta_model *m, cta_proc *p, int dev, const cta_gap *g);
    /* A gap of device dev ended (its parts by cause; called for every gap, of 0 ns too). */
    void (*gap)(cta_model *m, cta_proc *p, int dev, const cta_gap_parts *g);
    /* A point the feature queued (cta_sweep_push with type CTA_P_FEAT_BEGIN or _END and kind
     * its slot) is applied. */
    void (*point)(cta_model *m, cta_proc *p, const cta_pt *pt);
    /* ---- the end ---- */
    /* The process's records are done and swept (cta_model_finish). */
    void (*finish)(cta_model *m, cta_proc *p);
    /* Moves what src (a finished partial model) holds at the model level into dst
     * (cta_model_merge; the processes move with their slots). */
    void (*merge)(cta_model *dst, cta_model *src);
    void (*proc_free)(cta_proc *p);
    void (*free)(cta_model *m);
    /* ---- a second pass over the trace files (cta_feature_pass2_*), of a finished (and merged)
     * model where the feature has state (cta_model.feat): what the first pass could not join,
     * as a GPU record that came before the call it belongs to ---- */
    /* Records of the types in `pass2_types` (bit 1 << CT_REC_x), file after file (pass2_record
     * is then not NULL). */
    uint64_t pass2_types;
    void (*pass2_record)(cta_model *m, const ct_rec *r);
    /* The second pass is done. */
    void (*pass2_finish)(cta_model *m);
    /* ---- the summary (cta_feature_text, _proc_text, _json, _proc_json) ---- */
    /* Where its sections go: at (CTA_AT_*) in the summary, proc_at (CTA_AT_PROC_*) in each
     * process's JSON; the text and the JSON in the same order. */
    uint8_t at, proc_at;
    /* Its sections of the text; top: rows per table (0 all). */
    void (*text)(FILE *f, const cta_model *m, int top);
    /* Its lines of a process in the text's Run section, after the capture windows. */
    void (*proc_text)(FILE *f, const cta_proc *p);
    /* Its keys of the JSON's top level; of each process. */
    void (*json)(cta_json *j, const cta_model *m);
    void (*proc_json)(cta_json *j, const cta_proc *p);
    /* What it says of device dev's idle time of cause cls (CTA_GAP_*) in the gaps of span:
     * lines of the text (each begun with indent), keys of the JSON object the cause or a
     * finding drawn from it is (cta_feature_gap_text, _gap_json: the breakdown's causes, the
     * findings of one cause). */
    void (*gap_text)(FILE *f, const cta_model *m, const cta_proc *p, int dev, int cls,
                     cta_span span, const char *indent);
    void (*gap_json)(cta_json *j, const cta_model *m, const cta_proc *p, int dev, int cls,
                     cta_span span);
    /* Where the loading's CPU went in device dev's idle time of cause cls (gaps of span): the loader
     * workers' activity on a CPU that held most of their sampled time there, in words into
     * out, its share of that time in *share; 0 when it knows none (cta_feature_gap_burning: a
     * CPU-bound loader's fix naming the line that burns the CPU). */
    int (*gap_burning)(const cta_model *m, const cta_proc *p, int dev, int cls, cta_span span,
                       char *out, size_t n, double *share);
} cta_feature;

/* The places of a feature's sections (cta_feature.at): after the breakdown (text and JSON's
 * "breakdown"), after the kernel tables (text and JSON's "kernels" and "kernel_variants"). */
enum { CTA_AT_BREAKDOWN, CTA_AT_KERNELS };
/* ... of its keys in each process's JSON (cta_feature.proc_at): after "source" (a Kineto
 * trace's), after "capture". */
enum { CTA_AT_PROC_SOURCE, CTA_AT_PROC_CAPTURE };

/* The features of every model made from now on: table[i] at slot i (NULL: none there), n at
 * most CTA_FEAT_MAX. Called once, before any model is made (the table is read, never written,
 * by the models of every thread). */
void cta_model_plug(const cta_feature *const *table, size_t n);
/* The feature at slot i of the model (NULL: not plugged). */
const cta_feature *cta_feature_at(const cta_model *m, int i);

/* ---- what the core offers features ---- */
/* cta_name_index (cta_model_int.h): the row of a name in the API or kernel table. */
/* An instance of kernel row k, configured as l, run by a graph launch; a copy or set a graph
 * launch ran: counted in the kernel and copy tables, untimed (cta_join.c). */
void cta_model_graph_kernel(cta_model *m, uint32_t k, const ct_rec_launch *l);
void cta_model_graph_copy(cta_model *m, const ct_rec_copy *cp);

/* The second pass of the features with state in m (cta_feature.pass2_*): the record types
 * it reads (0: no second pass is needed), each record of those types, its end. */
uint64_t cta_feature_pass2_types(const cta_model *m);
void cta_feature_pass2_record(cta_model *m, const ct_rec *r);
void cta_feature_pass2_finish(cta_model *m);

/* The output hooks of every plugged feature whose sections go at `at`, in slot order. */
void cta_feature_text(FILE *f, const cta_model *m, int top, int at);
void cta_feature_proc_text(FILE *f, const cta_model *m, const cta_proc *p);
void cta_feature_json(cta_json *j, const cta_model *m, int at);
void cta_feature_proc_json(cta_json *j, const cta_model *m, const cta_proc *p, int at);
/* The gap hooks of every plugged feature, in slot order. */
void cta_feature_gap_text(FILE *f, const cta_model *m, const cta_proc *p, int dev, int cls,
                          cta_span span, const char *indent);
void cta_feature_gap_json(cta_json *j, const cta_model *m, const cta_proc *p, int dev, int cls,
                          cta_span span);
/* The first plugged feature's gap_burning that knows one (0: none does). */
int cta_feature_gap_burning(const cta_model *m, const cta_proc *p, int dev, int cls, cta_span span,
                            char *out, size_t n, double *share);

#endif
