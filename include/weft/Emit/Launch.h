//===- Launch.h - Launch scripts for a plan's program -----------*- C++ -*-===//
//
// The scripts that start every rank of an emitted plan (docs/Emit.md,
// "Launch"): `torchrun-node<K>.sh` per mesh node, `local.sh` (all ranks on
// this machine with gloo) and `slurm.sbatch`. Ranks are mesh device ids
// (node-major), so node K's script runs ranks K·L … K·L + L − 1 and local
// rank i drives visible GPU i.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EMIT_LAUNCH_H
#define WEFT_EMIT_LAUNCH_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace weft {

struct LaunchOptions {
  /// The program every rank runs: relative to the launch folder, or
  /// absolute.
  std::string program = "../torch/program.py";
  /// The host (name or address) of each mesh node, in node order; at least
  /// one per node when given. Empty: node 0's address is read from
  /// WEFT_MASTER_ADDR when a node script runs (1-node plans: 127.0.0.1).
  std::vector<std::string> hosts;
  /// The rendezvous port on node 0 (WEFT_MASTER_PORT overrides it).
  unsigned masterPort = 29500;
};

/// Reads a hosts file: one host per line in node order; blank lines and
/// lines starting with '#' are skipped. Bad input (exit 1) for an unreadable
/// file, no host, or a line that is not a host name or address.
llvm::Expected<std::vector<std::string>> readHostsFile(llvm::StringRef path);

/// Writes `dir/torchrun-node<K>.sh` (one per mesh node), `dir/local.sh`
/// (both executable) and `dir/slurm.sbatch`, creating `dir`. Bad input
/// (exit 1): no mesh, fewer hosts than nodes, a port out of range, a file
/// that cannot be written.
llvm::Error writeLaunchDir(mlir::ModuleOp plan, const LaunchOptions &opts,
                           llvm::StringRef dir);

/// The same files on one stream, each after a line
/// `# ==> launch/<name> <==`.
llvm::Error emitLaunch(mlir::ModuleOp plan, const LaunchOptions &opts,
                       llvm::raw_ostream &os);

} // namespace weft

#endif // WEFT_EMIT_LAUNCH_H
