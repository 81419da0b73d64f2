#!/bin/sh
# Builds the results database: the eight GPUs of the paper (Table 5, the
# published artifact's CSVs in data/empirical), a SwiftShader run of the
# WebGPU page (results/swiftshader), this project's CPU runs (results/cpu)
# and its NVIDIA H200 runs (results/h200: CUDA; results/h200-vulkan:
# Vulkan and wgpu), with what is known of each device. Run from anywhere:
#
#     results/database/import.sh results.sqlite
#
# BACKENDS names the binary (default: `backends` on PATH). Importing twice
# is harmless: files already in the database are counted once.
set -eu
db=$(realpath -m "${1:?usage: import.sh DATABASE}")
bin=${BACKENDS:-backends}
# From the project root, so that the database records each file's path
# relative to it, the same on every machine.
cd "$(dirname "$0")/../.."
e=data/empirical
gpu() { # name vendor architecture host; the files in $files, per configuration
    vendor=$2 arch=$3 host=$4
    # shellcheck disable=SC2046 # one path per word: no spaces in them
    "$bin" db import --db "$db" --vendor "$vendor" --architecture "$arch" --host "$host" \
        $(for c in "$e"/*_instruction; do for f in $files; do echo "$c/$f.csv"; done; done)
}
files="CUDA/laptop_940m-inter-workgroup"
gpu 940m NVIDIA "GeForce 940M (Maxwell), CUDA" "laptop"
files="CUDA/toucan_quadro_rtx4000-inter-workgroup CUDA/toucan_quadro_rtx4000_coop-inter-workgroup CUDA/toucan_quadro_rtx4000_subgroup CUDA/toucan_quadro_rtx4000_subgroup_sm70"
gpu rtx4000 NVIDIA "Quadro RTX 4000 (Turing), CUDA" "workstation"
files="Apple/ipad_air_3_a12-inter-workgroup"
gpu a12 Apple "A12, Metal" "iPad Air 3"
files="Apple/iphone_12_a14-inter-workgroup"
gpu a14 Apple "A14, Metal" "iPhone 12"
files="Vulkan/intelHD620-2021-03-16"
gpu hd620 Intel "HD Graphics 620 (Kaby Lake), Vulkan" "laptop"
files="Vulkan/pixel5-adreno-2021-02-06"
gpu adreno Qualcomm "Adreno 620, Vulkan" "Pixel 5"
files="Vulkan/galaxy-s20-mali-2021-02-07"
gpu mali Arm "Mali-G77, Vulkan" "Galaxy S20"
files="Vulkan/results-NVIDIA-SHIELD-Android-TV"
gpu tx1 NVIDIA "Tegra X1 (Maxwell), Vulkan" "SHIELD Android TV"
# SwiftShader through the WebGPU page (results/swiftshader/README.md).
"$bin" db import --db "$db" --vendor Google --architecture "SwiftShader (Vulkan on the CPU), WebGPU" \
    --host "headless Chromium" results/swiftshader
# The CPU runs: the host comes from their device.json.
"$bin" db import --db "$db" --vendor CPU --architecture "x86_64, C++ threads" results/cpu
# The first Hopper GPU (results/h200/README.md): the published suite under
# the three mappings, with a normal, an intra-warp and a cooperative
# launch; and the same H200 through Vulkan (vkrun) and WGSL through wgpu
# (results/h200-vulkan/README.md). One GPU (--gpu), five setups (--setup):
# the 2 s-deadline re-runs (h200-2s, h200-intra-warp-2s) are campaigns of
# the setup they re-ran, and settle its hangs that were too close to call.
h200() { # setup architecture driver files...
    setup=$1 arch=$2 driver=$3
    shift 3
    "$bin" db import --db "$db" --vendor NVIDIA --architecture "$arch" --driver "$driver" \
        --host "a rented GPU machine (Firecracker VM)" --gpu "NVIDIA H200" --setup "$setup" "$@"
}
cuda="H200 (Hopper), CUDA"
h=results/h200
h200 "CUDA, normal launch" "$cuda" "580.159.04 (CUDA 13.0)" $h/*/CUDA/h200.csv $h/*/CUDA/h200-2s.csv
h200 "CUDA, intra-warp launch" "$cuda" "580.159.04 (CUDA 13.0)" \
    $h/*/CUDA/h200-intra-warp.csv $h/*/CUDA/h200-intra-warp-2s.csv
h200 "CUDA, cooperative launch" "$cuda" "580.159.04 (CUDA 13.0)" $h/*/CUDA/h200-cooperative.csv
v=results/h200-vulkan
h200 "Vulkan" "H200 (Hopper), Vulkan" "580.159.04" $v/*/Vulkan/h200-vulkan.csv
h200 "wgpu, WGSL on Vulkan" "H200 (Hopper), wgpu" "580.159.04" $v/*/wgpu/h200-wgpu.csv
