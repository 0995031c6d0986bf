/* The slot of each feature in the model (cta_feature.h): where its state hangs off the model,
 * each process and each thread (feat[slot]). The table at these slots is cta_features.c's. */
#ifndef CTA_FEATURE_SLOTS_H
#define CTA_FEATURE_SLOTS_H

enum { CTA_FEAT_GEMM, CTA_FEAT_GRAPH, CTA_FEAT_HOST, CTA_FEAT_NVTX, CTA_FEAT_HOSTACT, CTA_FEAT_STARTUP,
       CTA_FEAT_N };

#endif
