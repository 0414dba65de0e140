module attributes {spmd.mesh = #spmd.mesh<local = [2, 2], classes = [#spmd.device_class<type = "CPU", peak_gflops = 100, memory_mb = 16000, nodes = [0]>]>, spmd.segments = [#spmd.segment<id = 0, extent = 4, ratios = [0.25], sizes = [1, 1, 1, 1]>], spmd.version = 2 : i64} {
  func.func @main(%x: tensor<4x2xf32> {spmd.dist = #spmd.dist<[id, gather(0, 0), id]>}) -> tensor<4x2xf32> {
    %l = spmd.local (%x) {variant = "relu.split", dists = [#spmd.dist<[id, gather(0, 0), id]>]} : (tensor<4x2xf32>) -> tensor<4x2xf32> {
    ^bb0(%p: tensor<4x2xf32>):
      %s = graph.relu %p : tensor<4x2xf32>
      spmd.yield %s : tensor<4x2xf32>
    }
    return %l : tensor<4x2xf32>
  }
}
