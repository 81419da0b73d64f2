#!/bin/bash
# The second device call (after campaign.sh showed that the Vulkan host's
# stop flag, in host memory, never reached a running dispatch on the H200):
# the canary with the flag in device-local memory (the host's new default)
# and, for the record, in host memory with a 2 s grace; if the first ends,
# the published suite through Vulkan under plain, then round-robin, until
# END; else the published suite through wgpu under round-robin. Also the
# intra-warp round-robin runs of the two tests results/h200 left
# inconclusive, with a 2 s deadline.
set -u
export PATH=$PATH:/usr/local/cuda/bin
T0=$(date +%s)
END=${END:-170}
el() { echo $(($(date +%s) - T0)); }
left() { [ "$(el)" -lt "$END" ]; }
cap() { local c=$1 r=$((END + 20 - $(el))); [ $r -lt $c ] && c=$r; [ $c -lt 1 ] && c=1; echo $c; }
W=/tmp/w
G=/tmp/g
mkdir -p $W/settle $W/vk $W/wgpu $G/bin
L=$W/log.txt
log() { echo "[$(el)s] $*" | tee -a $L; }
snap() {
    cp $L $OUT/log.txt
    tar -C $W -czf $OUT/runs.tmp . && mv $OUT/runs.tmp $OUT/runs.tar.gz
}
log "start; END=$END"
[ -n "${DRY_RUN:-}" ] || for f in .gl/*.deb; do dpkg -x $f /; done
ldconfig
tar -C $G -xJf .gpu/gpu.tar.xz
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd*.json /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json; do
    [ -e "$f" ] && { export VK_DRIVER_FILES=$f; break; }
done
(nvcc -O2 -arch=sm_90 -o $G/bin/settle $G/cuda/settle.cu 2>$W/settle/build.err; touch $G/bin/settle-done) &

timeout -s KILL 40 $G/vk/vkrun --shaders $G/vk --info >$W/vk/info.json 2>$W/vk/info.err
ok=$?
log "vulkan info (auto) rc=$ok $(cat $W/vk/info.json) $(head -c 1000 $W/vk/info.err)"
timeout -s KILL 20 $G/vk/vkrun --shaders $G/vk --info --stop-memory host --stop-grace-ms 2000 >$W/vk/info-host.json 2>$W/vk/info-host.err
log "vulkan info (host) rc=$? $(cat $W/vk/info-host.json) $(head -c 1000 $W/vk/info-host.err)"
snap

published() {
    local who=$1 m=$2 d=$3 c=$4 run dir ext
    if [ $who = vk ]; then run=$G/vk/vkrun dir=$G/vk ext=comp; else run=$G/backends-wgpu dir=$G/wgsl ext=wgsl; fi
    for cfg in 2t2i 2t3i 3t3i 3t4i 2t4i; do
        left || break
        local tests=$(cd $dir && ls ${cfg}_*.$m.$ext | sed "s/\.$m\.$ext\$//" | paste -sd,)
        timeout -s KILL $(cap $c) $run --shaders $dir --test "$tests" --mapping $m --iterations 1 --deadline-ms $d \
            >$W/$who/$m-$cfg.jsonl 2>$W/$who/$m-$cfg.err
        log "$who $m $cfg rc=$? $(grep -c '"terminated":false' $W/$who/$m-$cfg.jsonl) of $(wc -l <$W/$who/$m-$cfg.jsonl) not terminated $(head -c 300 $W/$who/$m-$cfg.err)"
        snap
        [ $who = vk ] && grep -q 'did not end within' $W/$who/$m-$cfg.err && { log "vk: a dispatch did not stop; no more vk"; return 1; }
    done
    return 0
}

if [ $ok -eq 0 ]; then
    timeout -s KILL 20 $G/vk/vkrun --shaders $G/vk --test 2t2i_2,2t2i_3 --mapping chunked --deadline-ms 500 >$W/vk/smoke.jsonl 2>$W/vk/smoke.err
    log "vulkan smoke rc=$? $(cat $W/vk/smoke.jsonl) $(head -c 500 $W/vk/smoke.err)"
    published vk plain 500 60 || ok=1
fi
while [ ! -e $G/bin/settle-done ]; do sleep 1; done
timeout -s KILL $(cap 40) $G/bin/settle --test 2t4i_84,2t4i_107 --intra-warp --mapping round-robin --iterations 4 --deadline-ms 2000 --stop-grace-ms 10000 \
    >$W/settle/iw.jsonl 2>$W/settle/iw.err
log "settle intra-warp rc=$? $(grep -c '"terminated":false' $W/settle/iw.jsonl) of $(wc -l <$W/settle/iw.jsonl) not terminated $(head -c 300 $W/settle/iw.err)"
snap
if [ $ok -eq 0 ]; then
    left && published vk round-robin 1000 100
else
    left && published wgpu round-robin 1000 100
fi
log "end"
snap
