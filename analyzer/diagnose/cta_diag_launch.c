/* The rules of launching (launch-bound, graph-reinstantiation), under the contract of
 * cta_diag_int.h. */
#include "cta_diag_int.h"

#include <stdio.h>

#include "cta_graph.h"
#include "cta_out.h"

static const cta_fix FIX_LAUNCH = {
    "cut launch overhead: capture the step in a CUDA graph (cudaStreamBeginCapture + "
    "cudaGraphLaunch), fuse small kernels, or give each kernel more work (larger batches)",
    "cut launch overhead: CUDA graphs (torch.cuda.graphs / torch.cuda.make_graphed_callables), "
    "torch.compile(mode=\"reduce-overhead\"), fused kernels, or larger batches"};
static const cta_fix FIX_LAUNCH_GRAPHED = {
    "cut launch overhead: the launches are CUDA graph launches already: capture more of the step "
    "into each graph (fewer, larger graphs), fuse small kernels, or give each kernel more work",
    "cut launch overhead: the launches are CUDA graph replays already: graph more of the step "
    "per replay (torch.cuda.graphs around the whole step), fused kernels, or larger batches"};

/* launch-bound: fewer launches (a graph, fused kernels) save the GPU's wait for each launch
 * (cta_dev.launch_wait_ns): from its earlier work's end to the latest the kernel can have
 * started. On an idle stream the recorded start is the host's time before the call (events
 * cannot tell when in the call the GPU got the kernel), so the wait runs to the call's
 * return; the idle gaps alone would leave the call out, as if the GPU had been busy */
static void launch_bound(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    uint64_t ln = dv->gap_ns[CTA_GAP_LAUNCH], lw = dv->launch_wait_ns;
    /* graphs are the fix only for launches that are not graph launches already: when most
     * of the wait was for graph launches, the fix is larger graphs */
    cta_graph_stats gs = cta_graph_stats_of(p);
    int graphed = 2 * dv->graph_launch_wait_ns > lw;
    if (dv->kernels && 2 * p->short_kernels >= dv->kernels &&
        (x = cta_diag_add(ds, p, d, lw, win,
                 cta_fix_for(p, graphed ? FIX_LAUNCH_GRAPHED : FIX_LAUNCH)))) {
        double avg_launch = p->launches ? (double)p->launch_api_ns / (double)p->launches : 0;
        double avg_kernel = (double)dv->kernel_ns / (double)dv->kernels;
        cta_diag_msg(x,
            "%llu of %llu kernels on GPU %d ran shorter than their launch call, as far as their "
            "GPU timings tell (avg kernel %s as recorded, avg launch %s); the GPU waited %s "
            "(%.1f%% of the window) for %llu launches, up to the calls' returns: fewer launches "
            "save that",
            (unsigned long long)p->short_kernels, (unsigned long long)dv->kernels, d,
            cta_fmt_ns(b1, avg_kernel), cta_fmt_ns(b2, avg_launch), cta_fmt_ns(b3, (double)lw),
            cta_diag_pct(lw, win), (unsigned long long)dv->launch_waits);
        cta_diag_ev(x, "waited_for_launch_ns", (double)lw, CTA_EV_NS);
        cta_diag_ev(x, "launches_waited_for", (double)dv->launch_waits, CTA_EV_COUNT);
        cta_diag_ev(x, "kernels", (double)dv->kernels, CTA_EV_COUNT);
        cta_diag_ev(x, "short_kernels", (double)p->short_kernels, CTA_EV_COUNT);
        cta_diag_ev(x, "avg_kernel_ns", avg_kernel, CTA_EV_NS);
        cta_diag_ev(x, "avg_launch_ns", avg_launch, CTA_EV_NS);
        cta_diag_ev(x, "idle_while_launching_ns", (double)ln, CTA_EV_NS);
        cta_diag_ev(x, "launch_gaps", (double)dv->gap_count[CTA_GAP_LAUNCH], CTA_EV_COUNT);
        cta_diag_ev(x, "graph_launches", (double)gs.launches, CTA_EV_COUNT);
        cta_diag_ev(x, "waited_for_graph_launch_ns", (double)dv->graph_launch_wait_ns, CTA_EV_NS);
        if (gs.launches)
            cta_diag_detail(x, "%llu of the process's %llu launches are CUDA graph launches already, "
                      "%s of the wait (%.1f%%)", (unsigned long long)gs.launches,
                   (unsigned long long)p->launches, cta_fmt_ns(b1, (double)dv->graph_launch_wait_ns),
                   cta_diag_pct(dv->graph_launch_wait_ns, lw));
        cta_diag_sites(m, p, CTA_SITE_LAUNCH, x);
        cta_diag_at_gap(x, p, d, CTA_GAP_LAUNCH, NULL, CTA_SITE_LAUNCH);
    }
}

const cta_diag_rule cta_diag_rule_launch_bound = {
    .id = "launch-bound", .per_device = 1, .where = CTA_WHERE_GAP + CTA_GAP_LAUNCH,
    .gap = 1 + CTA_GAP_LAUNCH, .run = launch_bound};

static const cta_fix FIX_REINSTANTIATE = {
    "instantiate each graph once, before the loop, and launch its exec again (cudaGraphLaunch); "
    "when its parameters change, update the exec in place (cudaGraphExecUpdate, "
    "cudaGraphExecKernelNodeSetParams) instead of capturing and instantiating it again",
    "capture the step once (torch.cuda.CUDAGraph / torch.cuda.graphs) and replay it, copying new "
    "inputs into its static input tensors instead of capturing again; with torch.compile, avoid "
    "recompiling (fixed shapes, or torch._dynamo.mark_dynamic)"};

/* graph-reinstantiation: a graph of the same kernels and configurations instantiated
 * again (captured in the loop and instantiated each step) costs an instantiation each time
 * that one exec, relaunched or updated in place, would not; the estimate counts the
 * instantiations only (capturing again costs more) */
static void reinstantiation(cta_diags *ds, const cta_proc *p, int dev, uint64_t win)
{
    (void)dev;
    char b1[32];
    cta_diag *x;
    cta_graph_stats gs = cta_graph_stats_of(p);
    if (gs.repeated &&
        (x = cta_diag_add(ds, p, -1, gs.repeat_ns, win, cta_fix_for(p, FIX_REINSTANTIATE)))) {
        cta_diag_msg(x,
            "%llu of %llu graph instantiations were of a graph instantiated before (%llu graphs "
            "of the same kernels and launch configurations instantiated more than once); they "
            "cost the host %s (%.1f%% of the window) beyond one instantiation per graph: "
            "instantiating once and relaunching saves at least that",
            (unsigned long long)gs.repeated, (unsigned long long)gs.instantiations,
            (unsigned long long)gs.repeated_shapes, cta_fmt_ns(b1, (double)gs.repeat_ns),
            cta_diag_pct(gs.repeat_ns, win));
        cta_diag_ev(x, "repeated_instantiations", (double)gs.repeated, CTA_EV_COUNT);
        cta_diag_ev(x, "instantiations", (double)gs.instantiations, CTA_EV_COUNT);
        cta_diag_ev(x, "repeated_graphs", (double)gs.repeated_shapes, CTA_EV_COUNT);
        cta_diag_ev(x, "instantiate_ns", (double)gs.instantiate_ns, CTA_EV_NS);
        cta_diag_ev(x, "repeated_instantiate_ns", (double)gs.repeat_ns, CTA_EV_NS);
        cta_diag_ev(x, "graph_launches", (double)gs.launches, CTA_EV_COUNT);
        cta_diag_ev(x, "exec_updates", (double)gs.updates, CTA_EV_COUNT);
        cta_diag_at_span(x, -1, gs.first_repeat, gs.first_repeat_ns);
    }
}

const cta_diag_rule cta_diag_rule_reinstantiation = {
    .id = "graph-reinstantiation", .per_device = 0, .where = -1, .run = reinstantiation};
