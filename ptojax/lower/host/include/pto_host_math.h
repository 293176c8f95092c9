// pto_host_math.h — float math for host tile loops: `fmadd` and the vectorizable elementary
// functions (exp_f32, log_f32, ... lgamma_f32), all defined in pto_host_vmath.h.
//
// libm's scalar calls stop the compiler from vectorizing a tile loop, and -ffast-math would
// change NaN/inf semantics, so these are branch-free polynomial implementations: every lane
// computes all cases and selects, with IEEE special values kept (NaN in -> NaN out,
// exp(-inf) = 0, exp(+large) = inf, log(0) = -inf, log(x<0) = NaN). exp and log are within
// 1 ulp of the correctly rounded result over the whole float range (subnormals included).
#pragma once

#include "pto_host_vmath.h"
