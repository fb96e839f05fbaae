#ifndef QB_KERNELS_AVX512_H
#define QB_KERNELS_AVX512_H
// This target's one export: the avx512 set's entry points (qb_kernel_list.h), for qb_dispatch.c.
struct qb_kernel_table;
extern const struct qb_kernel_table qb_kernels_avx512;
#endif
