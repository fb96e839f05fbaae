#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(){ long n=200000000; long x=3; double t=now();
 for(long k=0;k<n;k++) __asm__ volatile("imul %0,%0\n\timul %0,%0\n\timul %0,%0\n\timul %0,%0" : "+r"(x));
 double dt=now()-t; printf("imul chain: %.2f GHz\n", 4.0*3*n/dt/1e9); return (int)x; }
