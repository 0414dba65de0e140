//===- SequenceSplits.h - SplitToSequence read back by index ----*- C++ -*-===//
//
// torch.onnx's dynamo exporter writes torch.split and torch.chunk as
// SplitToSequence followed by SequenceAt with constant positions (GPT-2's
// packed Q/K/V projection, Mixtral's gate/up pair). A sequence is not a
// tensor, so the importer has no value for it; when every use of the
// sequence is such a SequenceAt, the pair is the tensor op Split, and this
// rewrite makes it one.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_SEQUENCESPLITS_H
#define WEFT_LIB_IMPORT_SEQUENCESPLITS_H

#include "onnx/onnx_pb.h"

namespace weft::import {

/// Rewrites each SplitToSequence whose input shape along the axis and split
/// sizes are known, and whose every use is a SequenceAt with a constant
/// position, into Split (plus Squeeze for keepdims = 0); the SequenceAt
/// nodes become Identity of the chosen piece. Other sequences are left for
/// the importer to report. Returns whether anything changed (shapes must
/// then be inferred again).
bool splitSequences(onnx::ModelProto &model);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_SEQUENCESPLITS_H
