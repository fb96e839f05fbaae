#!/bin/sh
QB_KERNELS=avx512 exec qb-main "$@"
