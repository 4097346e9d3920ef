// Layering probe: compiled as a file of src/admit/. Admission takes domain types and never depends on
// a reader, so this include must not be found.
#include "readers/k8s/k8s_yaml.h"
