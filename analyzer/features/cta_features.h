/* The features of the `cutrace` command, one entry per slot (cta_feature_slots.h), in the order
 * their output comes (cta_feature_text, _json): what cli/main.c plugs into every model
 * (cta_model_plug). Adding a feature: DESIGN.md, "Adding a feature". */
#ifndef CTA_FEATURES_H
#define CTA_FEATURES_H

#include "cta_feature.h"
#include "cta_feature_slots.h"

extern const cta_feature *const cta_features[CTA_FEAT_N];

#endif
