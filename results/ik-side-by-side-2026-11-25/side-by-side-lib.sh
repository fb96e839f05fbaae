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
ik()   { run "$1" env ${IK_OMP_WAIT_POLICY:+OMP_WAIT_POLICY=$IK_OMP_WAIT_POLICY} "$IK_BIN/llama-bench" -m "$2" -rtr 1 -t "$3" -p "$4" -n 128 -r 3; }
main() { run "$1" env ${IK_OMP_WAIT_POLICY:+OMP_WAIT_POLICY=$IK_OMP_WAIT_POLICY} "$LLAMA_BIN/llama-bench" -m "$2" -t "$3" -p "$4" -n 128 -r 3; }
qb()   { pp=$4; [ "$pp" = 0 ] && pp=; run "$1" "$QB" bench --model "$2" --threads "$3" ${pp:+--pp "$pp"} --tg 128 --repetitions 3 --warmup 1 --roofline; }
