//===- Cell.cpp - Device multisets and Cells as text ----------------------===//

#include "weft/Cell/Cell.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/SmallVector.h"

using namespace weft;
using namespace weft::cell;

unsigned cell::totalDevices(const DeviceMultiset &devices) {
  unsigned total = 0;
  for (const auto &entry : devices)
    total += entry.second;
  return total;
}

std::string cell::formatMultiset(const DeviceMultiset &devices) {
  std::string text;
  for (const auto &[type, count] : devices)
    text += (text.empty() ? "" : "+") + std::to_string(count) + "x" + type;
  return text;
}

llvm::Expected<DeviceMultiset> cell::parseMultiset(llvm::StringRef text) {
  DeviceMultiset devices;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, text.contains('+') ? '+' : ',', -1, false);
  for (llvm::StringRef part : parts) {
    part = part.trim();
    llvm::StringRef type, number;
    if (part.contains('=')) {
      std::tie(type, number) = part.split('=');
    } else {
      std::tie(number, type) = part.split('x');
    }
    unsigned count = 0;
    if (type.trim().empty() || number.trim().getAsInteger(10, count) ||
        count == 0)
      return badInput("device multiset '{0}': expected COUNTxTYPE[+...] or "
                      "TYPE=COUNT[,...] with counts >= 1, found '{1}'",
                      text, part);
    devices[type.trim().str()] += count;
  }
  if (devices.empty())
    return badInput("device multiset '{0}': no devices", text);
  return devices;
}

std::string cell::formatCell(const Cell &cell) {
  return formatMultiset(cell.devices) + "/S" + std::to_string(cell.stages);
}

llvm::StringRef cell::sourceName(EstimateSource source) {
  switch (source) {
  case EstimateSource::Full:
    return "full";
  case EstimateSource::Fast:
    return "fast";
  case EstimateSource::Pruned:
    return "pruned";
  }
  return "unknown";
}
