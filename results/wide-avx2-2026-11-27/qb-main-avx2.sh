#!/bin/sh
QB_KERNELS=avx2 exec qb-main "$@"
