#!/bin/bash
# The second H200 session's one device call (prepare.sh packs .gpu/gpu.tar.xz
# here first). In order, each step bounded, none started after END seconds:
#   1. the Vulkan host (vkrun) and the wgpu runner: --info (device, canary),
#      then a known hanging and a known terminating run through vkrun;
#   2. CUDA: the three round-robin tests results/h200 left inconclusive,
#      with a 2 s deadline;
#   3. Vulkan and wgpu: the published suite under plain;
#   4. CUDA: the 5,231 weak-fair conformance tests of the five complete
#      configurations, plain x 3;
#   5. Vulkan: the published suite under round-robin; CUDA: the weak-fair
#      tests again, cooperative launch, chunked; Vulkan: chunked.
# Every result line lands in $OUT/runs.tar.gz, refreshed after each step,
# with $OUT/log.txt.
set -u
export PATH=$PATH:/usr/local/cuda/bin
T0=$(date +%s)
END=${END:-540}
el() { echo $(($(date +%s) - T0)); }
left() { [ "$(el)" -lt "$END" ]; }
# A step's time limit: its own cap, or what is left before END + 40 s.
cap() { local c=$1 r=$((END + 40 - $(el))); [ $r -lt $c ] && c=$r; [ $c -lt 1 ] && c=1; echo $c; }
W=/tmp/w
G=/tmp/g
mkdir -p $W/settle $W/vk $W/wgpu $W/wf $W/coop $W/build $G/bin
L=$W/log.txt
log() { echo "[$(el)s] $*" | tee -a $L; }
snap() {
    cp $L $OUT/log.txt
    tar -C $W -czf $OUT/runs.tmp . && mv $OUT/runs.tmp $OUT/runs.tar.gz
}

log "start; END=$END"
# (DRY_RUN=1: a rehearsal on a machine without a GPU; nothing unpacked into /)
[ -n "${DRY_RUN:-}" ] || for f in .gl/*.deb; do dpkg -x $f /; done
ldconfig
tar -C $G -xJf .gpu/gpu.tar.xz
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd*.json /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json; do
    [ -e "$f" ] && { export VK_DRIVER_FILES=$f; break; }
done
for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
    [ -e "$f" ] && { export __EGL_VENDOR_LIBRARY_FILENAMES=$f; break; }
done
log "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
{ nvidia-smi; nvcc --version; nproc; cat /etc/os-release; ldconfig -p | grep -iE 'vulkan|nvidia'; } >>$L 2>&1
snap

# Builds: the small program first, the 46 weak-fair chunks in the background.
nvcc -O2 -arch=sm_90 -o $G/bin/settle $G/cuda/settle.cu 2>$W/build/settle.err
log "settle built rc=$?"
(ls $G/wfcu/*.cu | xargs -P 12 -I{} sh -c 'f={}; n=$(basename $f .cu); nvcc -O2 -arch=sm_90 -o '$G'/bin/$n.tmp $f 2>'$W'/build/$n.err && mv '$G'/bin/$n.tmp '$G'/bin/$n'; touch $G/bin/all-built) &

# 1. Devices and canaries.
timeout -s KILL 60 $G/bin/settle --info >$W/settle/info.json 2>$W/settle/info.err
log "cuda info rc=$? $(cat $W/settle/info.json) $(cat $W/settle/info.err)"
timeout -s KILL 60 $G/vk/vkrun --shaders $G/vk --info >$W/vk/info.json 2>$W/vk/info.err
log "vulkan info rc=$? $(cat $W/vk/info.json) $(head -c 2000 $W/vk/info.err)"
timeout -s KILL 90 $G/backends-wgpu --shaders $G/wgsl --info >$W/wgpu/info.json 2>$W/wgpu/info.err
log "wgpu info rc=$? $(cat $W/wgpu/info.json) $(head -c 2000 $W/wgpu/info.err)"
timeout -s KILL 30 $G/vk/vkrun --shaders $G/vk --test 2t2i_2,2t2i_3 --mapping chunked --deadline-ms 500 >$W/vk/smoke.jsonl 2>$W/vk/smoke.err
log "vulkan smoke rc=$? $(cat $W/vk/smoke.jsonl) $(head -c 2000 $W/vk/smoke.err)"
snap

# 2. The inconclusive round-robin tests (2t4i_154 beside them, as advised).
timeout -s KILL $(cap 150) $G/bin/settle --mapping round-robin --iterations 8 --deadline-ms 2000 --stop-grace-ms 10000 \
    >$W/settle/rr.jsonl 2>$W/settle/rr.err
log "settle rc=$? $(grep -c '"terminated":false' $W/settle/rr.jsonl) of $(wc -l <$W/settle/rr.jsonl) not terminated"
snap

# Runs a runner over the published suite, one process per configuration.
# $1: vk or wgpu; $2: mapping; $3: deadline (ms); $4: per-process cap (s).
published() {
    local who=$1 m=$2 d=$3 c=$4 run dir ext
    if [ $who = vk ]; then run=$G/vk/vkrun dir=$G/vk ext=comp; else run=$G/backends-wgpu dir=$G/wgsl ext=wgsl; fi
    for cfg in 2t2i 2t3i 3t3i 2t4i 3t4i; do
        left || break
        local tests=$(cd $dir && ls ${cfg}_*.$m.$ext | sed "s/\.$m\.$ext\$//" | paste -sd,)
        timeout -s KILL $(cap $c) $run --shaders $dir --test "$tests" --mapping $m --iterations 1 --deadline-ms $d \
            >$W/$who/$m-$cfg.jsonl 2>$W/$who/$m-$cfg.err
        log "$who $m $cfg rc=$? $(grep -c '"terminated":false' $W/$who/$m-$cfg.jsonl) of $(wc -l <$W/$who/$m-$cfg.jsonl) not terminated $(head -c 300 $W/$who/$m-$cfg.err)"
        snap
    done
}

# 3. Plain.
left && published vk plain 500 120
left && published wgpu plain 500 120

# 4. The complete weak-fair suites with CUDA: plain x 3, then cooperative.
wf() {
    local dir=$1
    shift
    for f in $G/wfcu/*.cu; do
        left || break
        local n=$(basename $f .cu)
        while [ ! -e $G/bin/$n ] && [ ! -e $G/bin/all-built ] && left; do sleep 1; done
        [ -e $G/bin/$n ] || { log "$n not built: $(head -c 300 $W/build/$n.err)"; continue; }
        timeout -s KILL $(cap 120) $G/bin/$n --stop-grace-ms 10000 "$@" >$W/$dir/$n.jsonl 2>$W/$dir/$n.err
        local rc=$?
        [ $rc -ne 0 ] && log "$dir $n rc=$rc $(head -c 300 $W/$dir/$n.err)"
    done
    log "wf $dir: $(cat $W/$dir/*.jsonl | wc -l) runs, $(cat $W/$dir/*.jsonl | grep -c '"terminated":false') not terminated"
    snap
}
left && wf wf --mapping plain --iterations 3 --deadline-ms 500

# 5. Vulkan round-robin, the weak-fair suites cooperative (chunked), Vulkan chunked.
left && published vk round-robin 1000 200
left && wf coop --cooperative --mapping chunked --iterations 1 --deadline-ms 300
left && published vk chunked 600 240
kill %1 2>/dev/null
log "end"
snap
