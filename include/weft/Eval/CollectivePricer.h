//===- CollectivePricer.h - Collective times for the evaluator ----*- C++
//-*-===//
//
// Prices one collective on one group of cluster devices with lib/Cost (or a
// profile DB's measured time when the group is of one device type and the
// DB has samples), memoised: a plan repeats the same collective on the same
// group many times (every layer, every parameter of one shape).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_EVAL_COLLECTIVEPRICER_H
#define WEFT_EVAL_COLLECTIVEPRICER_H

#include "weft/Cost/Collective.h"
#include "weft/Cost/ProfileDB.h"
#include "weft/Spmd/Duals.h"
#include "llvm/ADT/StringMap.h"
#include <string>

namespace weft {

/// How a collective runs: the ops' `algorithm` and `mode` attributes.
struct CollectiveVariant {
  AllReduceAlgo algo = AllReduceAlgo::Ring;
  /// Take the fastest of ring, hierarchical and tree (gradient sync: no op
  /// in the program chooses it).
  bool bestAllReduce = false;
  UnevenVariant uneven = UnevenVariant::Padded;
  /// Gradient sync in buckets of this many bytes (0: one collective per
  /// tensor). A contribution smaller than a bucket pays its share of one
  /// bucket's collective: bytes / bucket × the time of the collective with
  /// every member's bytes scaled up to fill the bucket; a larger one is
  /// priced as it is (docs/CostModel.md "Gradient buckets").
  double bucketBytes = 0;
};

/// The factor a bucketed collective's member bytes are scaled up by to fill
/// one bucket (its time is divided by it); 1 when not bucketed or when the
/// largest contribution fills a bucket.
inline double bucketScale(const CollectiveVariant &variant, double largest) {
  if (variant.bucketBytes <= 0 || largest <= 0 ||
      largest >= variant.bucketBytes)
    return 1;
  return variant.bucketBytes / largest;
}

/// The device name a profile DB keys a collective of `group` by: the
/// members' device type, or for members of several types their distinct
/// type names, sorted, joined with '+' (e.g. "P100+V100").
std::string groupTypeName(const ClusterSpec &spec,
                          llvm::ArrayRef<unsigned> group);

class CollectivePricer {
public:
  CollectivePricer(const ClusterSpec &spec, const ProfileDB *db,
                   CollectiveOptions options)
      : spec(spec), db(db), options(options) {}

  /// Seconds of `kind` on `group` (cluster ids, node-major). `bytes[i]` is
  /// member i's contribution: its shard for all_gather / reduce_scatter,
  /// the buffer for all_reduce, what it sends for all_to_all.
  double seconds(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
                 llvm::ArrayRef<double> bytes, CollectiveVariant variant = {});

private:
  double compute(spmd::Collective kind, llvm::ArrayRef<unsigned> group,
                 llvm::ArrayRef<double> bytes, CollectiveVariant variant);

  const ClusterSpec &spec;
  const ProfileDB *db;
  CollectiveOptions options;
  llvm::StringMap<double> memo;
};

} // namespace weft

#endif // WEFT_EVAL_COLLECTIVEPRICER_H
