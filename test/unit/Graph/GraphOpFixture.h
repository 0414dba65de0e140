//===- GraphOpFixture.h - One graph op parsed, its rules and cost -*- C++
//-*-===//
//
// The fixture of the per-op gtests: parses a function holding one graph op
// and gives its sharding variants as ShardingRulesTest.cpp prints them, its
// cost, or the verifier's diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_UNIT_GRAPH_GRAPHOPFIXTURE_H
#define WEFT_TEST_UNIT_GRAPH_GRAPHOPFIXTURE_H

#include "Graph/IR/GraphDialect.h"
#include "Graph/IR/GraphOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <string>
#include <vector>

namespace weft::graph::test {

class GraphOpTest : public ::testing::Test {
protected:
  GraphOpTest() {
    context.loadDialect<GraphDialect, mlir::func::FuncDialect>();
  }

  /// The last graph op of a function with `args` and `body` (null when the
  /// text does not parse or verify; `error` then holds the diagnostic).
  mlir::Operation *parse(llvm::StringRef args, llvm::StringRef body) {
    std::string text =
        ("func.func @f(" + args + ") {\n" + body + "\n  return\n}\n").str();
    error.clear();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      if (error.empty())
        error = d.str();
      return mlir::success();
    });
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return nullptr;
    mlir::Operation *found = nullptr;
    module->walk([&](ShardingRuleOpInterface op) { found = op; });
    return found;
  }

  /// The op's sharding variants, printed.
  std::vector<std::string> variantsOf(llvm::StringRef args,
                                      llvm::StringRef body) {
    mlir::Operation *op = parse(args, body);
    EXPECT_TRUE(op) << error;
    if (!op)
      return {};
    llvm::SmallVector<ShardingVariant, 8> variants;
    llvm::cast<ShardingRuleOpInterface>(op).getShardingVariants(variants);
    std::vector<std::string> printed;
    for (const ShardingVariant &v : variants) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << v;
      printed.push_back(os.str());
    }
    return printed;
  }

  /// The op's global cost.
  OpCost costOf(llvm::StringRef args, llvm::StringRef body) {
    mlir::Operation *op = parse(args, body);
    EXPECT_TRUE(op) << error;
    return op ? llvm::cast<CostOpInterface>(op).getGlobalCost() : OpCost();
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string error;
};

} // namespace weft::graph::test

#endif // WEFT_TEST_UNIT_GRAPH_GRAPHOPFIXTURE_H
