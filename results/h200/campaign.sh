#!/bin/bash
# One device call: build the emitted CUDA programs with nvcc, run the canary,
# the published suite (plain, round-robin, chunked) in rounds, the idiom
# library, the SIMT tests, the intra-warp and cooperative variants; stop
# starting new work after END seconds. Everything lands in $OUT/runs.tar.gz
# (refreshed after every step) and $OUT/log.txt.
set -u
export PATH=$PATH:/usr/local/cuda/bin
T0=$(date +%s)
END=${END:-500}
D=${D:-300}
el() { echo $(($(date +%s) - T0)); }
CALL=${CALL:-1}
W=/tmp/w$CALL
B=$PWD/.gpubin
mkdir -p $W/pub $W/idioms $W/simt $W/iw $W/coop $B
L=$W/log.txt
log() { echo "[$(el)s] $*" | tee -a $L; }
snap() {
    cp $L $OUT/log.txt
    tar -C $W -czf $OUT/runs.tmp . && mv $OUT/runs.tmp $OUT/runs$CALL.tar.gz
}
left() { [ "$(el)" -lt "$END" ]; }

log "start; END=$END D=$D"
nvidia-smi >>$L 2>&1
nvcc --version >>$L 2>&1
nproc >>$L

# Build: every .cu at once, 16 cores (kept in .gpubin for a second call).
export B W
if [ ! -e $B/done ]; then
    ls .gpu/pub/*.cu .gpu/simt/*.cu .gpu/idioms/*.cu |
        xargs -P 16 -I{} sh -c 'f={}; d=$(basename $(dirname $f)); n=$(basename $f .cu); nvcc -O2 -arch=sm_90 -o $B/$d-$n $f 2>$W/build-$d-$n.err || echo "build failed: $f" >>$W/log.txt'
    touch $B/done
fi
log "built $(ls $B | wc -l) programs"
snap

# Canary and device description.
timeout -s KILL 60 $B/pub-p00 --info >$W/info.json 2>$W/info.err
log "info rc=$? $(cat $W/info.json) $(cat $W/info.err)"
snap

# A round of the published suite: every chunk, 3 mappings, one iteration.
# $1: round number; $2: directory; rest: extra flags.
round() {
    local r=$1 dir=$2
    shift 2
    for p in $B/pub-p*; do
        left || break
        n=$(basename $p)
        timeout -s KILL 300 $p --iterations 1 --deadline-ms $D --stop-grace-ms 10000 ${INST:-} "$@" \
            >$W/$dir/r$r-$n.jsonl 2>>$W/$dir/r$r.err
        local rc=$?
        [ $rc -ne 0 ] && log "$dir round $r $n rc=$rc"
        snap
    done
    log "$dir round $r done: $(cat $W/$dir/r$r-*.jsonl | wc -l) runs, $(cat $W/$dir/r$r-*.jsonl | grep -c '"terminated":false') not terminated"
    snap
}

idioms() {
    for p in $B/idioms-*; do
        n=$(basename $p)
        for k in 1 2 3 4 5; do
            timeout -s KILL 8 $p 1000 >>$W/idioms/$n.jsonl 2>>$W/idioms/$n.err
            local rc=$?
            if [ $rc -ne 0 ]; then
                log "idiom $n run $k rc=$rc"
                break
            fi
        done
    done
    log "idioms done"
    snap
}

simt() {
    for p in $B/simt-*; do
        n=$(basename $p)
        timeout -s KILL 20 $p 1000 >$W/simt/$n.jsonl 2>$W/simt/$n.err
        log "simt $n rc=$? $(sort $W/simt/$n.jsonl | sed 's/.*"outcome"/outcome/' | sort | uniq -c | tr '\n' ';')"
    done
    snap
}

r=1
if [ "${MODE:-full}" = full ]; then
    round 1 pub
    left && idioms
    left && simt
    left && round 1 iw --intra-warp --mapping plain,round-robin
    left && round 1 coop --cooperative
    r=2
fi
while left; do
    round $r pub
    [ $r -le 3 ] && [ "${MODE:-full}" = full ] && left && round $r iw --intra-warp --mapping plain,round-robin
    [ $r -le 3 ] && [ "${MODE:-full}" = full ] && left && round $r coop --cooperative
    r=$((r + 1))
done
log "end"
snap
