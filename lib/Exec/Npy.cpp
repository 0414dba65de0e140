//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format: "\x93NUMPY", major and minor version bytes, the header length
// (2 bytes little-endian in version 1, 4 bytes in 2 and 3), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "weft/Exec/Npy.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>

using namespace weft;
using namespace weft::exec;

namespace {

/// The text after `'key':` in the header dict, or "" when absent.
llvm::StringRef dictValue(llvm::StringRef header, llvm::StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == llvm::StringRef::npos)
    return "";
  llvm::StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return "";
  return rest.ltrim();
}

llvm::Expected<Shape> parseShape(llvm::StringRef text, llvm::StringRef name) {
  if (!text.consume_front("("))
    return badInput("{0}: malformed .npy header (no shape tuple)", name);
  llvm::StringRef body = text.take_until([](char c) { return c == ')'; });
  Shape shape;
  llvm::SmallVector<llvm::StringRef> parts;
  body.split(parts, ',');
  for (llvm::StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return badInput("{0}: malformed .npy shape '({1})'", name, body);
    shape.push_back(dim);
  }
  return shape;
}

template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

} // namespace

llvm::Expected<Tensor> weft::exec::parseNpy(llvm::StringRef bytes,
                                            llvm::StringRef name) {
  if (!bytes.startswith("\x93NUMPY") || bytes.size() < 10)
    return badInput("{0}: not a .npy file (bad magic)", name);
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, dataStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
    dataStart = 10 + headerLen;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return badInput("{0}: truncated .npy header", name);
    headerLen = load<uint32_t>(bytes.data() + 8);
    dataStart = 12 + headerLen;
  } else {
    return badInput("{0}: unsupported .npy version {1}", name, major);
  }
  if (dataStart > bytes.size())
    return badInput("{0}: truncated .npy header", name);
  llvm::StringRef header = bytes.slice(dataStart - headerLen, dataStart);
  if (dictValue(header, "fortran_order").startswith("True"))
    return badInput("{0}: Fortran-order arrays are not supported (save with "
                    "np.ascontiguousarray)",
                    name);
  llvm::StringRef descr = dictValue(header, "descr");
  if (!descr.consume_front("'"))
    return badInput("{0}: malformed .npy header (no descr)", name);
  descr = descr.take_until([](char c) { return c == '\''; });
  auto shape = parseShape(dictValue(header, "shape"), name);
  if (!shape)
    return shape.takeError();
  int64_t count = numElementsOf(*shape);
  size_t width = descr == "<f4" || descr == "<i4"   ? 4
                 : descr == "<f8" || descr == "<i8" ? 8
                 : descr == "|b1" || descr == "|u1" ? 1
                                                    : 0;
  if (width == 0)
    return badInput("{0}: unsupported .npy dtype '{1}' (expected float32, "
                    "float64, int32, int64 or bool, little-endian)",
                    name, descr);
  llvm::StringRef data = bytes.drop_front(dataStart);
  if (data.size() < size_t(count) * width)
    return badInput("{0}: expected {1} elements of {2} bytes, found {3} bytes",
                    name, count, width, data.size());
  bool isFloat = descr[1] == 'f';
  Tensor t(isFloat ? ElementType::F32 : ElementType::I64, *shape);
  const char *p = data.data();
  for (int64_t i = 0; i < count; ++i, p += width) {
    if (descr == "<f4")
      t.floats()[i] = load<float>(p);
    else if (descr == "<f8")
      t.floats()[i] = float(load<double>(p));
    else if (descr == "<i4")
      t.ints()[i] = load<int32_t>(p);
    else if (descr == "<i8")
      t.ints()[i] = load<int64_t>(p);
    else
      t.ints()[i] = uint8_t(*p) != 0;
  }
  return t;
}

llvm::Expected<Tensor> weft::exec::readNpy(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return badInput("cannot read '{0}': {1}", path,
                    buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path);
}

llvm::Error weft::exec::writeNpy(llvm::StringRef path, const Tensor &t) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return badInput("cannot write '{0}': {1}", path, ec.message());
  std::string shape = "(";
  for (int64_t d : t.getShape())
    shape += std::to_string(d) + ", ";
  if (t.getRank() > 1)
    shape.resize(shape.size() - 2);
  else if (t.getRank() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  bool isBool = t.getElementType() == ElementType::I1;
  const char *descr = t.isFloat() ? "<f4" : isBool ? "|b1" : "<i8";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  if (t.isFloat()) {
    os.write(reinterpret_cast<const char *>(t.floats()),
             t.getNumElements() * sizeof(float));
  } else if (isBool) {
    for (int64_t v : t.intValues())
      os << char(v != 0);
  } else {
    os.write(reinterpret_cast<const char *>(t.ints()),
             t.getNumElements() * sizeof(int64_t));
  }
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    return badInput("cannot write '{0}': {1}", path, message);
  }
  return llvm::Error::success();
}
