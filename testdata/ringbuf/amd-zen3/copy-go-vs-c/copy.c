#include <stdio.h>
#include <string.h>
#include <time.h>
static char dst[64<<10], src[4096];
int main(void){
  int sizes[]={16,64,256,1024};
  for(int s=0;s<4;s++){int n=sizes[s]; int stride=(n+15)&~7; long iters=20000000L;
    struct timespec a,b; int off=0; clock_gettime(CLOCK_MONOTONIC,&a);
    for(long i=0;i<iters;i++){ if(off+stride>(int)sizeof dst) off=0; memcpy(dst+off+8,src,n); __asm__ volatile(""::"r"(dst):"memory"); off+=stride;}
    clock_gettime(CLOCK_MONOTONIC,&b);
    printf("BenchmarkCopy/%d\t%ld\t%.3f ns/op\n", n, iters, ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/iters);}
}
