// RUN: weft-opt %s -split-input-file -verify-diagnostics
// Each broken stage structure is reported in one line naming the op
// (docs/Pipeline.md, "Verifier").

// An unknown schedule.
// expected-error @+1 {{'spmd.schedule' must be "1f1b" or "gpipe"}}
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "zigzag"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// Stages out of program order (swapped).
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  // expected-error @+1 {{stage module at position 0 has 'spmd.stage' 1; stages are in program order}}
  module @stage0 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// Two stages on one node.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      // expected-error @-4 {{stage 1: node 0 belongs to stage 0 too}}
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A stage mesh whose devices are not its node's.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      // expected-error @-4 {{stage 1: node 0 of its mesh does not have the devices of cluster node 1}}
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A missing recv: the send has no partner.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      // expected-error @+1 {{stage 0: send #0 has no matching recv in stage 1 (it receives 0)}}
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      return %l : tensor<f32>
    }
  }
}

// -----

// An activation sent to the wrong stage.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      // expected-error @+1 {{stage 0: sends to stage 0; a stage sends to the next (1)}}
      spmd.send %x {peer = 0 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A recv of another type than the send.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      // expected-error @+1 {{stage 1: recv #0 has type 'tensor<4x4xf32>' but send #0 of stage 0 sends 'tensor<4x8xf32>'}}
      %h = spmd.recv {peer = 0 : i64} : tensor<4x4xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A partial value received.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      // expected-error @+1 {{stage 1: a value received between stages cannot be partial}}
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, sum]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A parameter declared in two stages.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      // expected-error @+1 {{stage 1: parameter 'w' is declared in stage 0 too; a parameter lives on one stage}}
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A stage before the last returning a value.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    // expected-error @+1 {{stage 0: @main returns 1 values; a stage before the last returns none}}
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return %l : tensor<f32>
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A function beside the stages.
module attributes {spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [1]>]>,
  spmd.micro_batches = 2 : i64, spmd.schedule = "1f1b"} {
  // expected-error @+1 {{a pipelined plan holds only stage modules ('spmd.stage'), found 'func.func'}}
  func.func @main() {
    return
  }
  module @stage0 attributes {spmd.stage = 0 : i64, spmd.nodes = array<i64: 0>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "V100", peak_gflops = 15700, memory_mb = 16000, nodes = [0]>]>} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) {
      %p = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<4x8xf32> -> #spmd.dist<[id, id]>
      spmd.send %x {peer = 1 : i64} : tensor<4x8xf32>
      return
    }
  }
  module @stage1 attributes {spmd.stage = 1 : i64, spmd.nodes = array<i64: 1>, spmd.mesh = #spmd.mesh<local = [2], classes = [
    #spmd.device_class<type = "P100", peak_gflops = 10600, memory_mb = 16000, nodes = [0]>]>,
    spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.5], sizes = [2, 2]>]} {
    func.func @main(%x: tensor<4x8xf32> {spmd.dist = #spmd.dist<[id, id]>}, %l: tensor<f32>) -> tensor<f32> {
      %h = spmd.recv {peer = 0 : i64} : tensor<4x8xf32> -> #spmd.dist<[id, gather(0, 0)]>
      return %l : tensor<f32>
    }
  }
}

// -----

// A stage attribute outside a pipelined plan.
// expected-error @+1 {{'spmd.stage' belongs on a stage module inside a pipelined plan ('spmd.schedule')}}
module attributes {spmd.stage = 0 : i64} {
}
