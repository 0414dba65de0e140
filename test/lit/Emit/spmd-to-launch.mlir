// The launch scripts of a plan (docs/Emit.md, "Launch"): this plan has 2
// nodes (a V100 and a P100 class) of 2 devices, so node K's torchrun runs
// ranks 2K and 2K+1 with --node_rank K under the static rendezvous, and
// local.sh starts all 4 ranks itself with the mesh's LOCAL_RANK and
// GROUP_RANK.
//
// RUN: weft-translate --spmd-to-launch %s | FileCheck %s
// RUN: printf 'gpu-a\n\n# the second node\n  gpu-b.example.org  \n' > %t.hosts
// RUN: weft-translate --spmd-to-launch %s --hosts %t.hosts -o %t.hosts.out
// RUN: FileCheck %s --check-prefix=HOSTS < %t.hosts.out
//
// The folder: executable .sh files that bash parses.
// RUN: rm -rf %t.dir && weft-translate --spmd-to-launch %s --launch-dir %t.dir/launch
// RUN: ls -l %t.dir/launch | FileCheck %s --check-prefix=DIR
// RUN: bash -n %t.dir/launch/local.sh && bash -n %t.dir/launch/torchrun-node0.sh
// RUN: bash -n %t.dir/launch/torchrun-node1.sh && bash -n %t.dir/launch/slurm.sbatch
//
// The scripts' own refusals (one line, exit 1; none reaches torch):
// RUN: %expect-exit 1 env -u PYTHON PATH=/nonexistent /bin/bash %t.dir/launch/local.sh 2>&1 | FileCheck %s --check-prefix=NOPY
// RUN: %expect-exit 1 env PYTHON=/bin/true %t.dir/launch/local.sh 2>&1 | FileCheck %s --check-prefix=NOPROG
// RUN: mkdir -p %t.dir/torch && touch %t.dir/torch/program.py
// RUN: %expect-exit 1 env -u WEFT_MASTER_ADDR PYTHON=/bin/true %t.dir/launch/torchrun-node1.sh 2>&1 | FileCheck %s --check-prefix=NOMASTER
// RUN: %expect-exit 1 env WEFT_MASTER_ADDR=h0 WEFT_CUDA_DEVICES=3 PYTHON=/bin/true %t.dir/launch/torchrun-node1.sh 2>&1 | FileCheck %s --check-prefix=NGPU
// RUN: %expect-exit 1 env -u SLURM_JOB_NODELIST /bin/bash %t.dir/launch/slurm.sbatch 2>&1 | FileCheck %s --check-prefix=NOSLURM
//
// A 1-node plan of CPUs with two local axes (2 x 2): rendezvous on this
// machine, no GPU.
// RUN: weft-translate --spmd-to-launch %S/Inputs/launch-1node-plan.mlir | FileCheck %s --check-prefix=ONE
//
// Bad input: one line, exit 1.
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: sed 's/ratios = \[0.25, 0.25\]/ratios = [0.5, 0.5]/' %s > %t.bad.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: sed 's/spmd.version = 2/spmd.version = 7/' %s > %t.v7.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %t.v7.mlir 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: echo 'module {}' > %t.nomesh.mlir
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %t.nomesh.mlir 2>&1 | FileCheck %s --check-prefix=NOMESH
// RUN: echo gpu-a > %t.one.hosts
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %s --hosts %t.one.hosts 2>&1 | FileCheck %s --check-prefix=FEWHOSTS
// RUN: printf 'gpu-a\ngpu b\n' > %t.space.hosts
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %s --hosts %t.space.hosts 2>&1 | FileCheck %s --check-prefix=BADHOST
// RUN: printf '# nothing\n\n' > %t.empty.hosts
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %s --hosts %t.empty.hosts 2>&1 | FileCheck %s --check-prefix=NOHOSTS
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %s --hosts %t.nohosts 2>&1 | FileCheck %s --check-prefix=HOSTSFILE
// RUN: touch %t.file
// RUN: %expect-exit 1 weft-translate --spmd-to-launch %s --launch-dir %t.file/launch 2>&1 | FileCheck %s --check-prefix=NODIR

module attributes {spmd.fingerprint = "sha256:138d427c08c1f3db9e61b92b631ff832753fb43f70251da49f0cf5af5402e3a1", spmd.mesh = #spmd.mesh<local = [2], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.25, 0.25], sizes = [1, 1, 1, 1]>], spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x2xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 0)]>}) -> tensor<4x2xf32> {
    %l = spmd.local (%x) {variant = "relu.split", dists = [#spmd.dist<[gather(0, 0), gather(0, 0)]>]} : (tensor<4x2xf32>) -> tensor<4x2xf32> {
    ^bb0(%p: tensor<4x2xf32>):
      %s = graph.relu %p : tensor<4x2xf32>
      spmd.yield %s : tensor<4x2xf32>
    }
    return %l : tensor<4x2xf32>
  }
}

// CHECK-LABEL: # ==> launch/local.sh <==
// CHECK-NEXT:  #!/usr/bin/env bash
// CHECK-NEXT:  # local.sh: runs all 4 rank(s) of the plan on this machine with gloo
// CHECK:       #   local.sh [program flags]
// CHECK:       # The plan: 4 rank(s) = 2 node(s) x 2 device(s); rank r is local device r % 2 of node r / 2.
// CHECK-NEXT:  # Model fingerprint: sha256:138d427c
// CHECK:       here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
// CHECK:       program="$here"/../torch/program.py
// CHECK:       port=${MASTER_PORT:-}
// CHECK:       export CUDA_VISIBLE_DEVICES={{$}}
// CHECK:       export WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
// CHECK:       for ((rank = 0; rank < 4; rank++)); do
// CHECK-NEXT:    RANK=$rank LOCAL_RANK=$((rank % 2)) GROUP_RANK=$((rank / 2)) "$py" "$program" "$@" &
// CHECK:       for ((left = 4; left > 0; left--)); do
// CHECK-NEXT:    wait -n

// CHECK-LABEL: # ==> launch/torchrun-node0.sh <==
// CHECK-NEXT:  #!/usr/bin/env bash
// CHECK-NEXT:  # torchrun-node0.sh: starts node 0 of the plan's 2 node(s) under torchrun: ranks 0-1, 2 V100 device(s).
// CHECK:       [ -n "${WEFT_MASTER_ADDR:-}" ] || fail "set WEFT_MASTER_ADDR to node 0's address"
// CHECK-NEXT:  master=$WEFT_MASTER_ADDR
// CHECK-NEXT:  port=${WEFT_MASTER_PORT:-29500}
// CHECK-NEXT:  # Local rank i is mesh device 0 + i and drives visible GPU i (cuda:LOCAL_RANK).
// CHECK-NEXT:  devices=${WEFT_CUDA_DEVICES:-0,1}
// CHECK:       export CUDA_VISIBLE_DEVICES=$devices
// CHECK:         extra=(--redirects 1 --tee 1)
// CHECK:       exec "$py" -m torch.distributed.run --nnodes 2 --node_rank 0 --nproc_per_node 2 \
// CHECK-NEXT:    --rdzv_backend static --rdzv_endpoint "$master:$port" ${extra[@]+"${extra[@]}"} \
// CHECK-NEXT:    "$program" "$@"

// CHECK-LABEL: # ==> launch/torchrun-node1.sh <==
// CHECK-NEXT:  #!/usr/bin/env bash
// CHECK-NEXT:  # torchrun-node1.sh: starts node 1 of the plan's 2 node(s) under torchrun: ranks 2-3, 2 P100 device(s).
// CHECK:       # Local rank i is mesh device 2 + i and drives visible GPU i (cuda:LOCAL_RANK).
// CHECK-NEXT:  devices=${WEFT_CUDA_DEVICES:-0,1}
// CHECK:       exec "$py" -m torch.distributed.run --nnodes 2 --node_rank 1 --nproc_per_node 2 \

// CHECK-LABEL: # ==> launch/slurm.sbatch <==
// CHECK-NEXT:  #!/usr/bin/env bash
// CHECK-NEXT:  #SBATCH --job-name=weft
// CHECK-NEXT:  #SBATCH --nodes=2
// CHECK-NEXT:  #SBATCH --ntasks-per-node=1
// CHECK-NEXT:  #SBATCH --gpus-per-node=2
// CHECK:       here=${WEFT_LAUNCH_DIR:-${SLURM_SUBMIT_DIR:-$PWD}}
// CHECK:       master=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
// CHECK:       srun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c \
// CHECK-NEXT:    'py=$1; shift; exec "$py" -m torch.distributed.run --node_rank "$SLURM_NODEID" "$@"' \
// CHECK-NEXT:    weft-node "$py" --nnodes 2 --nproc_per_node 2 --rdzv_backend static \
// CHECK-NEXT:    --rdzv_endpoint "$master:$port" ${extra[@]+"${extra[@]}"} "$program" "$@"
// CHECK-NOT:   ==>

// HOSTS-LABEL: # ==> launch/torchrun-node0.sh <==
// HOSTS:       # Run every node's script at the same time, this one on host gpu-a.
// HOSTS:       master=${WEFT_MASTER_ADDR:-gpu-a}
// HOSTS-LABEL: # ==> launch/torchrun-node1.sh <==
// HOSTS:       # Run every node's script at the same time, this one on host gpu-b.example.org.
// HOSTS:       master=${WEFT_MASTER_ADDR:-gpu-a}

// DIR: -rwxr-xr-x {{.*}} local.sh
// DIR: -rw-r--r-- {{.*}} slurm.sbatch
// DIR: -rwxr-xr-x {{.*}} torchrun-node0.sh
// DIR: -rwxr-xr-x {{.*}} torchrun-node1.sh
// DIR-NOT: torchrun-node2

// NOPY: local.sh: error: no Python with torch on PATH: set PYTHON (e.g. PYTHON=/path/to/venv/bin/python)
// NOPROG: local.sh: error: no program at {{.*}}launch/../torch/program.py (weftc -o DIR or weft-translate --spmd-to-torch writes it)
// NOMASTER: torchrun-node1.sh: error: set WEFT_MASTER_ADDR to node 0's address
// NGPU: torchrun-node1.sh: error: WEFT_CUDA_DEVICES is '3', node 1 of the plan has 2 GPU(s)
// NOSLURM: slurm.sbatch: error: not inside a Slurm job: submit with sbatch slurm.sbatch

// ONE-LABEL: # ==> launch/local.sh <==
// ONE:       export WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
// ONE:         RANK=$rank LOCAL_RANK=$((rank % 4)) GROUP_RANK=$((rank / 4)) "$py" "$program" "$@" &
// ONE-LABEL: # ==> launch/torchrun-node0.sh <==
// ONE-NEXT:  #!/usr/bin/env bash
// ONE-NEXT:  # torchrun-node0.sh: starts node 0 of the plan's 1 node(s) under torchrun: ranks 0-3, 4 CPU device(s).
// ONE:       master=${WEFT_MASTER_ADDR:-127.0.0.1}
// ONE-NEXT:  port=${WEFT_MASTER_PORT:-29500}
// ONE-NEXT:  # CPU devices: no GPU, the runtime uses gloo.
// ONE-NEXT:  export CUDA_VISIBLE_DEVICES={{$}}
// ONE:       exec "$py" -m torch.distributed.run --nnodes 1 --node_rank 0 --nproc_per_node 4 \
// ONE-LABEL: # ==> launch/slurm.sbatch <==
// ONE:       #SBATCH --nodes=1
// ONE-NEXT:  #SBATCH --ntasks-per-node=1
// ONE-NEXT:  #
// ONE:       export CUDA_VISIBLE_DEVICES={{$}}
// ONE:       srun --nodes=1 --ntasks-per-node=1
// ONE-NOT:   ==>

// MISSING: weft-translate: error: {{.*}}spmd-to-launch.mlir.tmp.missing.mlir{{.*}}
// MISSING-NOT: {{.}}
// VERIFY: weft-translate: error: {{.*}}ratios sum to 2 over the mesh's devices, expected 1
// VERIFY-NOT: {{.}}
// VERSION: weft-translate: error: {{.*}}unsupported plan format version 7{{.*}}
// VERSION-NOT: {{.}}
// NOMESH: weft-translate: error: the plan has no 'spmd.mesh' attribute: not an spmd plan
// FEWHOSTS: weft-translate: error: 1 host(s) given for the plan's 2 nodes: give one host per node, in node order
// BADHOST: weft-translate: error: {{.*}}.space.hosts:2: 'gpu b' is not a host name or address (one host per line)
// NOHOSTS: weft-translate: error: hosts file '{{.*}}.empty.hosts' names no host (one per line, in node order)
// HOSTSFILE: weft-translate: error: cannot read hosts file '{{.*}}.nohosts': No such file or directory
// NODIR: weft-translate: error: cannot create '{{.*}}.file/launch': Not a directory
