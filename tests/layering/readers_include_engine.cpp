// Layering probe: compiled as a file of layer readers. The readers build domain types and must not
// see the simulator's engine (the fuzz targets build them without it).
#include "sim/simulator.h"
