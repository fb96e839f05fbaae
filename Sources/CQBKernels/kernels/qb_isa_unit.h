// The kernel sources as one translation unit for one instruction set. Each per-set target
// (Sources/CQBKernelsAVX512, CQBKernelsAVX2, CQBKernelsPortable) is a file that defines
// QB_ISA and includes this; Package.swift gives each its compiler flags (-march=x86-64-v4
// and VNNI, -march=x86-64-v3, none), so the `#if defined(__AVX2__)` / QB_AVX512 paths of
// the sources are chosen by real target flags, and the compiler vectorizes the plain loops
// for that set too. The sources' public names get the set's prefix (qb_isa_names.h), and
// qb_kernels_<set> collects them for qb_dispatch.c.
#ifndef QB_ISA
#error "define QB_ISA (avx512, avx2 or portable) before including qb_isa_unit.h"
#endif
#include "qb_isa_names.h"
#include "qb_kernel_list.h"

// One file after another, as if each were compiled on its own: a source's file-wide
// `#pragma clang fp contract(off)` (GGML's rounding) must not leak into the next one, so
// contraction is set back to the command line's (-ffp-contract=on) after each.
#include "qb_activation.c"
#pragma clang fp contract(on)
#include "qb_attention.c"
#pragma clang fp contract(on)
#include "qb_dense.c"
#pragma clang fp contract(on)
#include "qb_dot_ggml.c"
#pragma clang fp contract(on)
#include "qb_dot_kquant.c"
#pragma clang fp contract(on)
#include "qb_dot_mlx.c"
#pragma clang fp contract(on)
#include "qb_formats.c"
#pragma clang fp contract(on)
#include "qb_gemm.c"
#pragma clang fp contract(on)
#include "qb_gemm_dense.c"
#pragma clang fp contract(on)
#include "qb_matvec_tiles.c"
#pragma clang fp contract(on)
#include "qb_ops.c"
#pragma clang fp contract(on)
#include "qb_quantizer.c"
#pragma clang fp contract(on)
#include "qb_repack.c"
#pragma clang fp contract(on)
#include "qb_roofline.c"
#pragma clang fp contract(on)

#define QB_KERNEL_ENTRY_R(ret, name, params, args) .name = QB_ISA_NAME(name),
#define QB_KERNEL_ENTRY_V(name, params, args) .name = QB_ISA_NAME(name),
const qb_kernel_table QB_ISA_CAT(qb_kernels_, QB_ISA, ) = {QB_KERNEL_LIST(QB_KERNEL_ENTRY_R, QB_KERNEL_ENTRY_V)};
