//===- RandomPlanOutput.h - weftc --random-plan -------------------*- C++
//-*-===//
//
// A random valid plan (weft/Spmd/RandomPlan.h) of the model on the cluster's
// mesh, estimated and written like a synthesised plan: to measure how well
// the cost model ranks plans it did not choose (bench/real_run.sh).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_RANDOMPLANOUTPUT_H
#define WEFT_TOOLS_WEFTC_RANDOMPLANOUTPUT_H

#include "weft/Eval/Evaluator.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "llvm/Support/Error.h"

namespace weft {

/// Builds the random plan of `seed` for `graph` on the mesh the baselines
/// use for `spec` (one class per device class), evaluates it with `eval`
/// (gradient-sync overlap on, as every plan weftc writes) and writes
/// `outDir`/plan.mlir, plan.json (source "random-SEED"), torch/ and launch/.
/// Prints one line with the estimate to `os`.
llvm::Error writeRandomPlan(uint64_t seed, mlir::ModuleOp graph,
                            const ClusterSpec &spec, EvalOptions eval,
                            PlanContext context, llvm::StringRef outDir,
                            llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_RANDOMPLANOUTPUT_H
