# Shared by side-by-side.sh: run one engine's benchmark and log it with its time and the
# load average after it.
log=side-by-side.log
run() {  # name, command...
    name=$1; shift
    echo "### [$(date -u +%H:%M:%S)] $*" >>"$log"
    case "$name" in
    qb-*) "$@" --no-db --out "$name.json" >"$name.txt" 2>"$name.err"; cat "$name.txt" >>"$log" ;;
    *) "$@" -o json -oe md >"$name.json" 2>"$name.md"; grep '^|' "$name.md" >>"$log" ;;
    esac
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
}
# ik NAME FILE THREADS PP [extra llama-bench arguments]: PP 0 runs decode only.
ik() { n=$1 m=$2 t=$3 p=$4; shift 4
       run "$n" env OMP_WAIT_POLICY=PASSIVE "$IK_BIN/llama-bench" -m "$m" -rtr 1 -t "$t" -p "$p" -n 128 -r 3 "$@"; }
# qb NAME MODEL THREADS PP [extra bench arguments]
qb() { n=$1 m=$2 t=$3 pp=$4; shift 4; [ "$pp" = 0 ] && pp=
       run "$n" "$QB" bench --model "$m" --threads "$t" ${pp:+--pp "$pp"} --tg 128 --repetitions 3 --warmup 1 --roofline "$@"; }
