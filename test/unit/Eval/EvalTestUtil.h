//===- EvalTestUtil.h - A toy cluster and plan parsing for the tests -*- C++
//-*-===//

#ifndef WEFT_TEST_UNIT_EVAL_EVALTESTUTIL_H
#define WEFT_TEST_UNIT_EVAL_EVALTESTUTIL_H

#include "Graph/IR/GraphDialect.h"
#include "Spmd/IR/SpmdOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "weft/Cluster/ClusterSpec.h"
#include <gtest/gtest.h>

namespace weft::test {

/// Two nodes of one device each, chosen so figures are easy by hand:
/// "Fast" computes 10 TFLOP/s and "Slow" 5 TFLOP/s in fp32 at efficiency 1
/// for every op class; memory bandwidth is so high (1000 TB/s) that every
/// op of the tests is FLOP-bound; the NICs move 8 Gbit/s = 1e9 B/s with a
/// latency of 10 us.
inline const char *kToyCluster = R"(
name: toy-2
device_types:
  - name: Fast
    fp32_peak: 10 TFLOPS
    memory: 16 GB
    memory_bandwidth: 1000 TB/s
    memory_efficiency: 1
    efficiency: {matmul: 1, conv: 1, elementwise: 1, reduction: 1, gather: 1, data_movement: 1}
  - name: Slow
    fp32_peak: 5 TFLOPS
    memory: 8 GB
    memory_bandwidth: 1000 TB/s
    memory_efficiency: 1
    efficiency: {matmul: 1, conv: 1, elementwise: 1, reduction: 1, gather: 1, data_movement: 1}
defaults:
  nic_bandwidth: 8 Gbit/s
  nic_latency: 10 us
nodes:
  - {name: a, type: Fast, devices: 1}
  - {name: b, type: Slow, devices: 1}
)";

/// The mesh of kToyCluster (one device per node).
inline const char *kToyMesh =
    R"(spmd.mesh = #spmd.mesh<local = [1], classes = [
    #spmd.device_class<type = "Fast", peak_gflops = 10000, memory_mb = 16000, nodes = [0]>,
    #spmd.device_class<type = "Slow", peak_gflops = 5000, memory_mb = 8000, nodes = [1]>]>)";

/// A softmax split along its reduced dim over the toy cluster's two nodes
/// (75 : 25 of 100 classes), after an add of a tensor-parallel parameter so
/// that a gradient flows; `variant` names the softmax's recipe.
inline std::string splitSoftmaxPlan(llvm::StringRef variant) {
  return std::string("module attributes {") + kToyMesh + R"(,
  spmd.segments = [#spmd.segment<id = 0, extent = 100, ratios = [0.75, 0.25], sizes = [75, 25]>],
  spmd.version = 2 : i64} {
  func.func @main(%x: tensor<8x100xf32> {spmd.dist = #spmd.dist<[gather(1, 0), id]>}) -> tensor<8x100xf32> {
    %w = spmd.parameter "w" {strategy = #spmd.strategy<replicated>} : tensor<8x100xf32> -> #spmd.dist<[gather(1, 0), id]>
    %z = spmd.local (%x, %w) {variant = "add.split, add.replicate", dists = [#spmd.dist<[gather(1, 0), id]>]} : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32> {
    ^bb0(%a: tensor<8x100xf32>, %b: tensor<8x100xf32>):
      %m = graph.add %a, %b : (tensor<8x100xf32>, tensor<8x100xf32>) -> tensor<8x100xf32>
      spmd.yield %m : tensor<8x100xf32>
    }
    %s = spmd.local (%z) {variant = ")" +
         variant.str() +
         R"(", dists = [#spmd.dist<[gather(1, 0), id]>]} : (tensor<8x100xf32>) -> tensor<8x100xf32> {
    ^bb0(%a: tensor<8x100xf32>):
      %m = graph.softmax %a {axis = 1 : i64} : tensor<8x100xf32>
      spmd.yield %m : tensor<8x100xf32>
    }
    return %s : tensor<8x100xf32>
  }
})";
}

inline ClusterSpec toyCluster() {
  auto spec = parseClusterSpec(kToyCluster, "toy-2.yaml");
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return {};
  }
  return std::move(*spec);
}

inline void loadDialects(mlir::MLIRContext &ctx) {
  ctx.loadDialect<mlir::func::FuncDialect, weft::graph::GraphDialect,
                  weft::spmd::SpmdDialect>();
}

/// Parses and verifies `text`; fails the test when it does not.
inline mlir::OwningOpRef<mlir::ModuleOp> parsePlan(mlir::MLIRContext &ctx,
                                                   llvm::StringRef text) {
  loadDialects(ctx);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  EXPECT_TRUE(module) << "plan does not parse or verify";
  return module;
}

} // namespace weft::test

#endif // WEFT_TEST_UNIT_EVAL_EVALTESTUTIL_H
