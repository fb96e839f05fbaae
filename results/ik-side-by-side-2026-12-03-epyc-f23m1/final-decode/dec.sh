# Decode-only round of the side by side (run in an empty folder; IK_BIN and QB as in
# ../../ik-side-by-side-2026-11-27/side-by-side.sh, MODELS the folder of the l1b-*.gguf files).
. "$(dirname "$0")/../../ik-side-by-side-2026-11-27/side-by-side-lib.sh"
r=1
for f in Q4_K_M Q4_0 Q2_K Q3_K_M; do
  m=$MODELS/l1b-$f.gguf
  ik "ik-$f-tg-$r" "$m" 2 0; qb "qb-$f-tg-$r" "$m" 2 0
done
ik "ik-Q4_K_M-1t-tg-$r" "$MODELS/l1b-Q4_K_M.gguf" 1 0; qb "qb-Q4_K_M-1t-tg-$r" "$MODELS/l1b-Q4_K_M.gguf" 1 0
