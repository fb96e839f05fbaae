set -u
B=BIN/quantbench-4f77941; C=BIN/quantbench-q8s; M=MODELS
run() { QB_KERNELS=avx2 $C ab --baseline $B --candidate $C --model $M/l1b-$1.gguf --pp $2 --tg 0 --threads $3 --rounds $4 --max-rounds $4 --max-seconds 900 --out $1-pp$2-t$3.json --summary $1-pp$2-t$3.md > $1-pp$2-t$3.log 2>&1; }
run Q4_K_M 512 2 10
run Q6_K-pure 512 2 8
run Q3_K_M 512 2 8
echo all-done > done.txt
