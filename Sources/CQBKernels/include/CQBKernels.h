// The module's umbrella header: every public header of the kernels, listed by name so that
// adding one changes this file and rebuilds the module (an umbrella directory's cached
// module does not notice a new header, and Swift then cannot see its functions).
#pragma once

#include "qb_activation.h"
#include "qb_attention.h"
#include "qb_dense.h"
#include "qb_dot_ggml.h"
#include "qb_dot_kquant.h"
#include "qb_dot_mlx.h"
#include "qb_formats.h"
#include "qb_gemm.h"
#include "qb_kernel_set.h"
#include "qb_matvec_tiles.h"
#include "qb_ops.h"
#include "qb_perf.h"
#include "qb_pool.h"
#include "qb_quantizer.h"
#include "qb_repack.h"
#include "qb_roofline.h"
