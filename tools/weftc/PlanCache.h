//===- PlanCache.h - Synthesised plans kept between runs ----------*- C++
//-*-===//
//
// A repeated `weftc -o` on the same model, cluster and options reuses the
// plan it synthesised before: the key is the SHA-256 of the weftc build
// (executable size and time), the model's fingerprint, the cluster spec's
// text and every option that changes the search; the entry is the plan.mlir and
// the synthesis record, or the memory shortfall that ended the search.
// The cache lives in $WEFT_CACHE_DIR, else
// $XDG_CACHE_HOME/weft, else ~/.cache/weft (under plans/<key>/); `--no-cache`
// bypasses it. The cache directory is created private to the user (0700).
// An entry is used only when its synthesis.json names its own key and the
// SHA-256 of its plan.mlir; a damaged, foreign or edited entry is a miss
// (and is rewritten), and a hit is still re-verified and re-evaluated.
// Entries are written atomically (weft/Support/FileOutput.h).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TOOLS_WEFTC_PLANCACHE_H
#define WEFT_TOOLS_WEFTC_PLANCACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "weft/PlanFormat/PlanJSON.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>

namespace weft {

class PlanCache {
public:
  /// The cache for `key` (see makeKey) under the default directory; none
  /// when no directory can be found.
  static std::optional<PlanCache> open(llvm::StringRef key);

  /// The key: SHA-256 (hex) of the parts, each length-prefixed.
  static std::string makeKey(llvm::ArrayRef<std::string> parts);

  /// The cached plan and its synthesis record, or none on a miss or a
  /// damaged entry.
  std::optional<std::pair<mlir::OwningOpRef<mlir::ModuleOp>, SynthesisRecord>>
  lookup(mlir::MLIRContext &context) const;

  /// Stores `plan` and `record`; failures are reported, not fatal.
  llvm::Error store(mlir::ModuleOp plan, const SynthesisRecord &record) const;

  /// A memory shortfall found before (no plan fits; its message and
  /// overflow, weft/Support/Error.h), or none. Kept so that a repeated
  /// gradient-accumulation run does not search the counts that failed.
  std::optional<std::pair<std::string, double>> lookupShortfall() const;
  llvm::Error storeShortfall(llvm::StringRef message, double overflow) const;

  llvm::StringRef directory() const { return dir; }

private:
  PlanCache(std::string dir, std::string key)
      : dir(std::move(dir)), key(std::move(key)) {}
  std::string dir;
  /// The entry's key; synthesis.json repeats it, with the SHA-256 of the
  /// stored plan text.
  std::string key;
};

} // namespace weft

#endif // WEFT_TOOLS_WEFTC_PLANCACHE_H
