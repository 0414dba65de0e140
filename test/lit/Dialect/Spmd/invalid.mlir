// RUN: weft-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{segment 0: ratios sum to 0.75 over the mesh's devices, expected 1}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25, 0.125]>]} {
}

// -----

// expected-error @+1 {{segment 0: ratio of class 1 is -0.25; ratios must be >= 0}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.75, -0.25]>]} {
}

// -----

// expected-error @+1 {{segment 0: expected 2 ratios (one per device class), found 1}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
}

// -----

// expected-error @+1 {{segment 0: integer sizes sum to 31, expected the extent 32}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.375, 0.125], sizes = [12, 11, 4, 4]>]} {
}

// -----

// expected-error @+1 {{segment 0: expected 4 integer sizes (one per device), found 2}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.375, 0.125], sizes = [24, 8]>]} {
}

// -----

// Reshape alignment: splitting 12 heads × 64 in the hidden view needs
// multiples of 64.
// expected-error @+1 {{segment 0: device 2 has size 96, not a multiple of the alignment 64}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 768, ratios = [0.375, 0.125], sizes = [320, 256, 96, 96], align = 64>]} {
}

// -----

// expected-error @+1 {{segment 0: device 1 has negative size -4}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.375, 0.125], sizes = [28, -4, 4, 4]>]} {
}

// -----

// expected-error @+1 {{segment id 0 is used twice}}
module attributes {
  spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 8, ratios = [1.0]>, #spmd.segment<id = 0, extent = 4, ratios = [1.0]>]} {
}

// -----

// expected-error @+1 {{segments need a mesh ('spmd.mesh')}}
module attributes {spmd.segments = []} {
}

// -----

// expected-error @+1 {{unsupported plan format version 1 : i64: this build reads version 2 (write the plan again with this weftc)}}
module attributes {spmd.version = 1 : i64} {
}

// -----

// expected-error @+1 {{'spmd.micro_batches' must be a positive i64}}
module attributes {spmd.micro_batches = 0 : i64} {
}

// -----

// expected-error @+1 {{'spmd.micro_batches' must be a positive i64}}
module attributes {spmd.micro_batches = "4"} {
}

// -----

// expected-error @+1 {{'spmd.micro_batches' belongs on the module}}
func.func @f() attributes {spmd.micro_batches = 4 : i64} {
  return
}

// -----

module attributes {
  // expected-error @+1 {{node 0 is negative or in two device classes}}
  spmd.mesh = #spmd.mesh<local = [1], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>, #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>} {
}

// -----

module attributes {
  // expected-error @+1 {{nodes must be numbered 0..2 without gaps}}
  spmd.mesh = #spmd.mesh<local = [1], classes = [#spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 2]>]>} {
}

// -----

module attributes {
  // expected-error @+1 {{device class 'V100' needs positive peak_gflops and memory_mb}}
  spmd.mesh = #spmd.mesh<local = [1], classes = [#spmd.device_class<type = "V100", peak_gflops = 0, memory_mb = 16000, nodes = [0]>]>} {
}

// -----

// expected-error @+1 {{expected id, gather(dim, segment), sum or max, found 'split'}}
func.func private @bad_entry() attributes {d = #spmd.dist<[split]>}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @wrong_entry_count(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{result: distribution has 1 entries, the mesh has 2 axes}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 0)]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @dim_out_of_range(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{result: gather(2, 0) splits dim 2 of a rank-2 tensor}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(2, 0), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @unknown_segment(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{result: gather(0, 7) names segment 7, which the module does not define}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 7), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @extent_mismatch(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{result: segment 0 has extent 32 but dim 1 has size 4}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(1, 0), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>, #spmd.segment<id = 1, extent = 32, ratios = [0.25]>]} {
  // expected-error @+1 {{argument #0: axes 0 and 1 split dim 0 with different segments}}
  func.func @two_segments_one_dim(%x: tensor<32x4xf32> {spmd.dist = #spmd.dist<[gather(0, 0), gather(0, 1)]>}) {
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  // expected-error @+1 {{argument #0: a partial (sum) value must be floating point}}
  func.func @partial_integer(%x: tensor<32xi64> {spmd.dist = #spmd.dist<[sum, id]>}) {
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @shard_of_split(%x: tensor<32x4xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) {
    // expected-error @+1 {{expected id -> gather on axis 0, found gather(0, 0) -> gather(0, 0)}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 0), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @changes_other_axis(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{changes axis 1 (id -> gather(0, 0)); only axis 0 may change}}
    %s = spmd.shard %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @gather_of_whole(%x: tensor<32x4xf32>) {
    // expected-error @+1 {{expected gather -> id on axis 1, found id -> id}}
    %g = spmd.all_gather %x {axis = 1 : i64} : tensor<32x4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @gather_mode(%x: tensor<32x4xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) {
    // expected-error @+2 {{to be one of: padded, grouped}}
    // expected-error @+1 {{failed to parse Spmd_GatherModeAttr}}
    %g = spmd.all_gather %x {axis = 0 : i64, mode = #spmd.gather_mode<broadcast>} : tensor<32x4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @reduce_scatter_of_max(%x: tensor<32x4xf32> {spmd.dist = #spmd.dist<[max, id]>}) {
    // expected-error @+1 {{expected sum -> gather on axis 0, found max -> gather(0, 0)}}
    %g = spmd.reduce_scatter %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 0), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @all_reduce_algorithm(%x: tensor<4xf32> {spmd.dist = #spmd.dist<[sum, id]>}) {
    // expected-error @+2 {{to be one of: ring, hierarchical, tree}}
    // expected-error @+1 {{failed to parse Spmd_AllReduceAlgorithmAttr}}
    %r = spmd.all_reduce %x {axis = 0 : i64, algorithm = #spmd.algorithm<butterfly>} : tensor<4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @all_reduce_axis(%x: tensor<4xf32> {spmd.dist = #spmd.dist<[sum, id]>}) {
    // expected-error @+1 {{axis 2 is not a mesh axis (0..1)}}
    %r = spmd.all_reduce %x {axis = 2 : i64} : tensor<4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 32, ratios = [0.25]>]} {
  func.func @all_to_all_same_dim(%x: tensor<32x4xf32> {spmd.dist = #spmd.dist<[gather(0, 0), id]>}) {
    // expected-error @+1 {{re-splits dim 0 onto itself; an all_to_all changes the dim}}
    %t = spmd.all_to_all %x {axis = 0 : i64} : tensor<32x4xf32> -> #spmd.dist<[gather(0, 0), id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @send_peer(%x: tensor<4xf32>) {
    // expected-error @+1 {{peer stage must be >= 0}}
    spmd.send %x {peer = -1 : i64} : tensor<4xf32>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @recv_dist() {
    // expected-error @+1 {{result: distribution has 3 entries, the mesh has 2 axes}}
    %r = spmd.recv {peer = 0 : i64} : tensor<4xf32> -> #spmd.dist<[id, id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @parameter_strategy() {
    // expected-error @+2 {{to be one of: replicated, zero1, zero2, zero3, buffer}}
    // expected-error @+1 {{failed to parse Spmd_ParamStrategyAttr}}
    %w = spmd.parameter "w" {strategy = #spmd.strategy<fsdp>} : tensor<4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @zero3_whole() {
    // expected-error @+1 {{zero3 stores the parameter sharded: its distribution needs a gather entry}}
    %w = spmd.parameter "w" {strategy = #spmd.strategy<zero3>} : tensor<4xf32> -> #spmd.dist<[id, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @parameter_partial() {
    // expected-error @+1 {{a parameter cannot be stored as a partial value}}
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4xf32> -> #spmd.dist<[sum, id]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>,
  spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.25]>]} {
  func.func @zero1_no_whole_axis() {
    // expected-error @+1 {{zero1 shards the optimizer state over a whole (id) axis: the distribution has none}}
    %w = spmd.parameter "w" {strategy = #spmd.strategy<zero1>} : tensor<4xf32> -> #spmd.dist<[gather(0, 0), gather(0, 0)]>
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @local_dists_typed(%x: tensor<4xf32>) {
    // expected-error @+1 {{attribute 'dists' failed to satisfy constraint: one distribution per result}}
    %r = spmd.local (%x) {variant = "v", dists = ["id"]} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      spmd.yield %a : tensor<4xf32>
    }
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @local_dists(%x: tensor<4xf32>) {
    // expected-error @+1 {{has 1 results but 0 distributions}}
    %r = spmd.local (%x) {variant = "v", dists = []} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      spmd.yield %a : tensor<4xf32>
    }
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @local_yield(%x: tensor<4xf32>) {
    // expected-error @+1 {{spmd.yield types differ from the result types}}
    %r = spmd.local (%x) {variant = "v", dists = [#spmd.dist<[id, id]>]} : (tensor<4xf32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<4xf32>):
      spmd.yield %a : tensor<4xf32>
    }
    return
  }
}

// -----

module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @local_args(%x: tensor<4xf32>) {
    // expected-error @+1 {{region has 0 arguments for 1 inputs}}
    %r = spmd.local (%x) {variant = "v", dists = [#spmd.dist<[id, id]>]} : (tensor<4xf32>) -> tensor<4xf32> {
      %c = graph.constant dense<1.0> : tensor<4xf32> : tensor<4xf32>
      spmd.yield %c : tensor<4xf32>
    }
    return
  }
}

// -----

func.func @no_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs a mesh: put 'spmd.mesh' on the module}}
  %r = spmd.recv {peer = 0 : i64} : tensor<4xf32> -> #spmd.dist<[id]>
  return
}

// -----

// A local without its dists feeding a collective (found by fuzzing: the
// collective's verifier read the missing attribute).
module attributes {
  spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0, 1]>]>} {
  func.func @local_without_dists(%x: tensor<4xf32>) {
    %r = spmd.local (%x) {variant = "v"} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      spmd.yield %a : tensor<4xf32>
    }
    // expected-error @+1 {{input has no distribution}}
    %s = spmd.all_reduce %r {axis = 0 : i64} : tensor<4xf32> -> #spmd.dist<[id, id]>
    return
  }
}
