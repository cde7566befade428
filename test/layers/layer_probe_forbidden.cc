// File: layer_probe_forbidden.cc
// Layer: test/layers. Built only by the ctest layers_forbidden_edge_does_not_compile: a target
// that links what the C bindings link (kairos_session) includes a header of a layer the
// session links privately (report). The compiler must refuse it: the include path of a
// private dependency does not reach the session's users.
#include "report/report.h"
