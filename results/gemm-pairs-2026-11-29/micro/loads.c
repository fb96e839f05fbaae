// What one core issues per second (thread CPU time, 20 M iterations of 12 independent
// instructions, best of three runs printed each): 512-bit loads, 32-bit broadcasts into zmm
// and into ymm, 256-bit loads, vpdpbusd on registers and with a memory operand (a 32-bit
// broadcast or a full 64 bytes), all from one L1-resident buffer.
//   clang -O2 loads.c -o loads && ./loads
#include <stdint.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int32_t buf[4096] __attribute__((aligned(64)));
#define CL "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11"
// Twelve instructions `ins` with operands `a` (memory, at 64-byte steps) and destinations 0-11.
#define T12(ins, a, r) ins " 0" a ", %%" r "0\n " ins " 64" a ", %%" r "1\n " ins " 128" a ", %%" r "2\n " ins " 192" a ", %%" r "3\n " \
    ins " 256" a ", %%" r "4\n " ins " 320" a ", %%" r "5\n " ins " 384" a ", %%" r "6\n " ins " 448" a ", %%" r "7\n "           \
    ins " 512" a ", %%" r "8\n " ins " 576" a ", %%" r "9\n " ins " 640" a ", %%" r "10\n " ins " 704" a ", %%" r "11\n"
#define R12(ins) ins " %%zmm20, %%zmm21, %%zmm0\n " ins " %%zmm20, %%zmm21, %%zmm1\n " ins " %%zmm20, %%zmm21, %%zmm2\n " \
    ins " %%zmm20, %%zmm21, %%zmm3\n " ins " %%zmm20, %%zmm21, %%zmm4\n " ins " %%zmm20, %%zmm21, %%zmm5\n "              \
    ins " %%zmm20, %%zmm21, %%zmm6\n " ins " %%zmm20, %%zmm21, %%zmm7\n " ins " %%zmm20, %%zmm21, %%zmm8\n "              \
    ins " %%zmm20, %%zmm21, %%zmm9\n " ins " %%zmm20, %%zmm21, %%zmm10\n " ins " %%zmm20, %%zmm21, %%zmm11\n"
#define RUN(label, code)                                                                   \
    do {                                                                                   \
        double best = 1e9;                                                                 \
        for (int r = 0; r < 3; r++) {                                                      \
            double t0 = now();                                                             \
            for (long i = 0; i < it; i++) __asm__ volatile(code ::"r"(p) : CL);            \
            double dt = now() - t0;                                                        \
            if (dt < best) best = dt;                                                      \
        }                                                                                  \
        printf("%-40s %.2f G/s\n", label, it * 12.0 / best / 1e9);                         \
    } while (0)
int main(void) {
    long it = 20000000;
    const int32_t *p = buf;
    RUN("vmovdqu64 zmm, m512", T12("vmovdqu64", "(%0)", "zmm"));
    RUN("vpbroadcastd zmm, m32", T12("vpbroadcastd", "(%0)", "zmm"));
    RUN("vmovdqu ymm, m256", T12("vmovdqu", "(%0)", "ymm"));
    RUN("vpbroadcastd ymm, m32", T12("vpbroadcastd", "(%0)", "ymm"));
    RUN("vpdpbusd zmm, zmm, zmm (12 chains)", R12("vpdpbusd"));
    RUN("vpdpbusd zmm, zmm, m32{1to16}", T12("vpdpbusd", "(%0)%{1to16%}, %%zmm21", "zmm"));
    RUN("vpdpbusd zmm, zmm, m512", T12("vpdpbusd", "(%0), %%zmm21", "zmm"));
    return 0;
}
