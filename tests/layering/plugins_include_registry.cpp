// Layering probe: compiled as a file of src/sched/plugins/. The policy registry builds the plugins,
// so a plugin must not see it (no cycle between plugins and registry).
#include "sched/policy_registry.h"
