//===- SpmdAttrs.cpp - Meshes, distributions, segments --------------------===//

#include "Spmd/IR/SpmdAttrs.h"
#include "Spmd/IR/SpmdDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "Spmd/IR/SpmdEnums.cpp.inc"

using namespace mlir;
using namespace weft::spmd;

#define GET_ATTRDEF_CLASSES
#include "Spmd/IR/SpmdAttrs.cpp.inc"

std::string weft::spmd::str(const AxisDist &d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << d;
  return os.str();
}

void SpmdDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Spmd/IR/SpmdAttrs.cpp.inc"
      >();
}

llvm::raw_ostream &weft::spmd::operator<<(llvm::raw_ostream &os,
                                          const AxisDist &d) {
  switch (d.kind) {
  case AxisDist::Kind::Identity:
    return os << "id";
  case AxisDist::Kind::Gather:
    return os << "gather(" << d.dim << ", " << d.segment << ")";
  case AxisDist::Kind::Sum:
    return os << "sum";
  case AxisDist::Kind::Max:
    return os << "max";
  }
  return os;
}

void weft::spmd::printRatios(AsmPrinter &printer, DenseF64ArrayAttr ratios) {
  printer << "[";
  llvm::interleaveComma(
      ratios.asArrayRef(), printer.getStream(), [&](double r) {
        std::string text = llvm::formatv("{0}", llvm::format("%.17g", r)).str();
        // Keep it a float literal ("0" would parse as an
        // integer).
        if (llvm::StringRef(text).find_first_of(".eEn") ==
            llvm::StringRef::npos)
          text += ".0";
        printer.getStream() << text;
      });
  printer << "]";
}

FailureOr<DenseF64ArrayAttr> weft::spmd::parseRatios(AsmParser &parser) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       double v;
                                       if (parser.parseFloat(v))
                                         return failure();
                                       values.push_back(v);
                                       return success();
                                     }))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

//===----------------------------------------------------------------------===//
// DistAttr
//===----------------------------------------------------------------------===//

Attribute DistAttr::parse(AsmParser &parser, Type) {
  SmallVector<AxisDist> axes;
  auto parseEntry = [&]() -> ParseResult {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    if (keyword == "id") {
      axes.push_back(AxisDist::identity());
      return success();
    }
    if (keyword == "sum") {
      axes.push_back(AxisDist::sum());
      return success();
    }
    if (keyword == "max") {
      axes.push_back(AxisDist::max());
      return success();
    }
    if (keyword != "gather")
      return parser.emitError(loc) << "expected id, gather(dim, segment), sum "
                                      "or max, found '"
                                   << keyword << "'";
    int64_t dim, segment;
    if (parser.parseLParen() || parser.parseInteger(dim) ||
        parser.parseComma() || parser.parseInteger(segment) ||
        parser.parseRParen())
      return failure();
    axes.push_back(AxisDist::gather(dim, segment));
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     parseEntry) ||
      parser.parseGreater())
    return {};
  return DistAttr::get(parser.getContext(), axes);
}

void DistAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getAxes(), printer.getStream());
  printer << "]>";
}

DistAttr DistAttr::with(unsigned axis, AxisDist entry) const {
  SmallVector<AxisDist> axes(getAxes());
  axes[axis] = entry;
  return DistAttr::get(getContext(), axes);
}

DistAttr DistAttr::replicated(MLIRContext *ctx, unsigned numAxes) {
  SmallVector<AxisDist> axes(numAxes, AxisDist::identity());
  return DistAttr::get(ctx, axes);
}

bool DistAttr::isPartial() const {
  return llvm::any_of(getAxes(),
                      [](const AxisDist &d) { return d.isPartial(); });
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               DenseI64ArrayAttr local, ArrayAttr classes) {
  if (llvm::any_of(local.asArrayRef(), [](int64_t f) { return f <= 0; }))
    return emitError() << "local axis factors must be positive";
  if (classes.empty())
    return emitError() << "a mesh needs at least one device class";
  llvm::SmallDenseSet<int64_t> seen;
  int64_t numNodes = 0;
  for (Attribute a : classes) {
    auto cls = a.dyn_cast<DeviceClassAttr>();
    if (!cls)
      return emitError() << "expected #spmd.device_class entries, found " << a;
    if (cls.getPeakGflops() <= 0 || cls.getMemoryMb() <= 0)
      return emitError() << "device class '" << cls.getType()
                         << "' needs positive peak_gflops and memory_mb";
    if (cls.getNodes().empty())
      return emitError() << "device class '" << cls.getType()
                         << "' has no nodes";
    for (int64_t n : cls.getNodes().asArrayRef()) {
      if (n < 0 || !seen.insert(n).second)
        return emitError() << "node " << n
                           << " is negative or in two device classes";
      numNodes = std::max(numNodes, n + 1);
    }
  }
  if (int64_t(seen.size()) != numNodes)
    return emitError() << "nodes must be numbered 0.." << numNodes - 1
                       << " without gaps";
  return success();
}

int64_t MeshAttr::getNumNodes() const {
  int64_t n = 0;
  for (Attribute a : getClasses())
    n += a.cast<DeviceClassAttr>().getNodes().size();
  return n;
}

int64_t MeshAttr::getDevicesPerNode() const {
  int64_t n = 1;
  for (int64_t f : getLocal().asArrayRef())
    n *= f;
  return n;
}

int64_t MeshAttr::getAxisSize(unsigned axis) const {
  return axis == 0 ? getNumNodes() : getLocal()[axis - 1];
}

int64_t MeshAttr::getClassIndexOfNode(int64_t node) const {
  for (auto [i, a] : llvm::enumerate(getClasses()))
    if (llvm::is_contained(a.cast<DeviceClassAttr>().getNodes().asArrayRef(),
                           node))
      return i;
  return -1;
}

DeviceClassAttr MeshAttr::getClassOfNode(int64_t node) const {
  int64_t i = getClassIndexOfNode(node);
  return i < 0 ? DeviceClassAttr() : getClasses()[i].cast<DeviceClassAttr>();
}
