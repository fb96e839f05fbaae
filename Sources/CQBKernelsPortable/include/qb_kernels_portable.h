#ifndef QB_KERNELS_PORTABLE_H
#define QB_KERNELS_PORTABLE_H
// This target's one export: the portable set's entry points (qb_kernel_list.h), for qb_dispatch.c.
struct qb_kernel_table;
extern const struct qb_kernel_table qb_kernels_portable;
#endif
