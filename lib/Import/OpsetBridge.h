//===- OpsetBridge.h - Opset 18+ models for an opset-17 checker --*- C++
//-*-===//
//
// Weft links the ONNX library that Debian 12 ships (1.12): its checker and
// shape inference know opsets up to 17 and IR versions up to 8. Exporters of
// late 2026 (torch.onnx in both its TorchScript and its dynamo form, onnx's
// own helpers) write opset 18 to 25 and IR 9 to 12. The differences that
// matter for training graphs are few and local, so the bridge rewrites them
// in place before the checker runs:
//
//  - changed forms of old ops become their opset-17 forms (reduction axes
//    given as an input become an attribute; Split's num_outputs, and new
//    attributes at their default values, are dropped);
//  - ops that opset 17 lacks and whose result has the shape and type of
//    their first input (Gelu, Mish, GroupNormalization, RMSNormalization,
//    Swish, RotaryEmbedding, SwiGLU), Attention (opset 23),
//    CausalConvWithState and LinearAttention (opset 27), elementwise ops
//    whose opset-17 schema rejects their input's float type (Celu of
//    float16), and pools opset 17 cannot
//    carry or the linked inference would type wrongly (dilated AveragePool
//    and LpPool, ceil_mode) move to a private domain the checker skips;
//    typeBridgedOutputs gives their results a type (their input's, or the
//    pool's by ONNX's window arithmetic; Attention's,
//    CausalConvWithState's and LinearAttention's outputs by BridgedTypes.h) so
//    shape inference continues past them, and restoreBridgedOps returns them to
//    the default domain for the importer's handlers;
//  - the IR version becomes 8 once nothing needs a later one (element
//    types such as float8 and int4 are bad input, named).
//
// A form with no opset-17 equivalent (reduction axes computed at run time,
// Pad over chosen axes) is a one-line error naming node and form.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_IMPORT_OPSETBRIDGE_H
#define WEFT_LIB_IMPORT_OPSETBRIDGE_H

#include "onnx/onnx_pb.h"
#include "llvm/Support/Error.h"

namespace weft::import {

/// The newest opset and IR version the linked checker knows.
inline constexpr int64_t kCheckerOpset = 17;
inline constexpr int64_t kCheckerIrVersion = 8;

/// The private domain bridged ops wait in while ONNX checks and infers.
inline constexpr const char *kBridgeDomain = "weft.bridge";

/// Rewrites `model` into opset-17, IR-8 forms. Returns the number of nodes
/// changed (0 for a model that needed nothing).
llvm::Expected<unsigned> bridgeToCheckerOpset(onnx::ModelProto &model);

/// Gives each bridged node's first output the type of its first input (a
/// pool's: the pooled type), when that is known and the output has none
/// yet. Returns whether any changed (shape inference should then run
/// again).
bool typeBridgedOutputs(onnx::ModelProto &model);

/// Returns bridged nodes to the default domain.
void restoreBridgedOps(onnx::ModelProto &model);

} // namespace weft::import

#endif // WEFT_LIB_IMPORT_OPSETBRIDGE_H
