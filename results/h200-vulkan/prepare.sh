#!/bin/bash
# Packs what campaign.sh runs into .gpu/gpu.tar.xz (git-ignored; the device
# call carries .gpu and .gl). Run from the project root on an x86-64 Linux
# machine with glslangValidator, g++, the Vulkan headers and Rust.
# BACKENDS names the backends binary; WGPU the backends-wgpu binary
# (cargo build --release -p backends --features wgpu --bin backends-wgpu).
set -eu
B=${BACKENDS:-backends}
WGPU=${WGPU:-target/release/backends-wgpu}
S=suites/oopsla21/oopsla21.ron
T=data/oopsla21/tests
G=$(mktemp -d)
$B emit --target vulkan $S --out $G/vk
(cd $G/vk && ls *.comp | xargs -P "$(nproc)" -I{} sh -c 'f={}; glslangValidator -V --target-env vulkan1.1 -o "${f%.comp}.spv" "$f" >/dev/null' &&
    g++ -std=c++17 -O2 vulkan_host.cpp -lvulkan -o vkrun)
$B emit --target wgsl $S --out $G/wgsl
$B emit --target cuda $T/2t4i_84.txt $T/2t4i_107.txt $T/2t4i_154.txt $T/2t4i_155.txt --name settle --out $G/cuda
mkdir -p $G/wf $G/wfcu
for c in 2t2i 2t3i 2t4i 3t3i 3t4i; do python3 results/h200-vulkan/weak_fair_chunks.py $c 120 $G/wf; done
for f in $G/wf/*.ron; do $B emit --target cuda $f --name wf-$(basename $f .ron) --out $G/wfcu; done
cp $WGPU $G/backends-wgpu
strip $G/backends-wgpu $G/vk/vkrun
mkdir -p .gpu
tar -C $G -cJf .gpu/gpu.tar.xz vk wgsl cuda wfcu backends-wgpu
rm -rf $G
ls -la .gpu/gpu.tar.xz
