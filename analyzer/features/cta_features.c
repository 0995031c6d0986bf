/* The table of features (cta_features.h). Removing a line leaves its slot empty: the feature's
 * records are ignored and its output is absent, the rest unchanged. */
#include "cta_features.h"
#include "cta_gemm.h"
#include "cta_graph.h"
#include "cta_host.h"
#include "cta_hostact.h"
#include "cta_nvtx.h"
#include "cta_startup.h"

_Static_assert(CTA_FEAT_N <= CTA_FEAT_MAX, "more features than the model has slots");

const cta_feature *const cta_features[CTA_FEAT_N] = {
    [CTA_FEAT_GEMM] = &cta_gemm_feature,
    [CTA_FEAT_GRAPH] = &cta_graph_feature,
    [CTA_FEAT_HOST] = &cta_host_feature,
    [CTA_FEAT_NVTX] = &cta_nvtx_feature,
    [CTA_FEAT_HOSTACT] = &cta_hostact_feature,
    [CTA_FEAT_STARTUP] = &cta_startup_feature,
};
