//===- NpyTest.cpp - NumPy .npy files -------------------------------------===//

#include "weft/Exec/Npy.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"
#include <cstring>

using namespace weft;
using namespace weft::exec;

/// A version 1.0 file as NumPy writes it.
static std::string npyBytes(const std::string &dict, const void *data,
                            size_t bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

TEST(NpyTest, ParsesFloat32Matrix) {
  float values[] = {1, 2, 3, 4, 5, 6};
  auto t = parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (2, 3), }",
                             values, sizeof(values)),
                    "x.npy");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->getShape(), llvm::ArrayRef<int64_t>({2, 3}));
  EXPECT_EQ(t->floats()[5], 6.0f);
}

TEST(NpyTest, ParsesInt64VectorAndInt32AndScalar) {
  int64_t ids[] = {7, -1, 3};
  auto t = parseNpy(npyBytes("{'descr': '<i8', 'fortran_order': False, "
                             "'shape': (3,), }",
                             ids, sizeof(ids)),
                    "y.npy");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->getElementType(), ElementType::I64);
  EXPECT_EQ(t->ints()[1], -1);
  int32_t small[] = {5};
  auto s = parseNpy(npyBytes("{'descr': '<i4', 'fortran_order': False, "
                             "'shape': (), }",
                             small, sizeof(small)),
                    "s.npy");
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->getRank(), 0);
  EXPECT_EQ(s->ints()[0], 5);
}

static std::string errorOf(llvm::Expected<Tensor> t) {
  EXPECT_FALSE(bool(t));
  if (t)
    return "";
  return llvm::toString(t.takeError());
}

TEST(NpyTest, RejectsBadFiles) {
  float v[] = {1};
  EXPECT_NE(errorOf(parseNpy("PK\x03\x04 not npy", "a.npy")).find("bad magic"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': "
                                      "True, 'shape': (1,), }",
                                      v, sizeof(v)),
                             "f.npy"))
                .find("Fortran"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(npyBytes("{'descr': '<c8', 'fortran_order': "
                                      "False, 'shape': (1,), }",
                                      v, sizeof(v)),
                             "c.npy"))
                .find("unsupported .npy dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': "
                                      "False, 'shape': (4,), }",
                                      v, sizeof(v)),
                             "t.npy"))
                .find("expected 4 elements"),
            std::string::npos);
}

TEST(NpyTest, WriteThenReadRoundTrips) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("weft-npy", "npy", path));
  Tensor t = Tensor::fromFloats({2, 1, 2}, {1.5f, -2, 3, 4});
  ASSERT_FALSE(bool(writeNpy(path, t)));
  auto back = readNpy(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->getShape(), t.getShape());
  EXPECT_EQ(back->floatValues(), t.floatValues());
  llvm::sys::fs::remove(path);
}

/// Writes `t` to a temporary file and returns the file's bytes.
static std::string writtenBytes(const Tensor &t) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("weft-npy", "npy", path));
  llvm::Error err = writeNpy(path, t);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  llvm::sys::fs::remove(path);
  return buffer ? (*buffer)->getBuffer().str() : "";
}

/// The header dict of a version 1.0 file and the data after it.
static std::pair<std::string, std::string> split(const std::string &bytes) {
  size_t len = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
  return {bytes.substr(10, len), bytes.substr(10 + len)};
}

TEST(NpyTest, WritesEachElementTypeAsItsNumpyDtype) {
  Tensor flags = Tensor::fromInts({2, 2}, {1, 0, 0, 1}, ElementType::I1);
  auto [boolHeader, boolData] = split(writtenBytes(flags));
  EXPECT_NE(boolHeader.find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(boolHeader.find("'shape': (2, 2)"), std::string::npos);
  EXPECT_EQ(boolData, std::string("\x01\x00\x00\x01", 4));
  // Data starts on a 64-byte boundary, as NumPy writes it.
  EXPECT_EQ((10 + boolHeader.size()) % 64, 0u);

  Tensor ids = Tensor::fromInts({3}, {5, -2, 1ll << 40});
  auto [intHeader, intData] = split(writtenBytes(ids));
  EXPECT_NE(intHeader.find("'descr': '<i8'"), std::string::npos);
  EXPECT_NE(intHeader.find("'shape': (3,)"), std::string::npos);
  ASSERT_EQ(intData.size(), 3 * sizeof(int64_t));
  int64_t last;
  std::memcpy(&last, intData.data() + 16, sizeof(last));
  EXPECT_EQ(last, 1ll << 40);

  auto [scalarHeader, scalarData] = split(writtenBytes(Tensor::scalar(2.5f)));
  EXPECT_NE(scalarHeader.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(scalarHeader.find("'shape': ()"), std::string::npos);
  float value;
  ASSERT_EQ(scalarData.size(), sizeof(value));
  std::memcpy(&value, scalarData.data(), sizeof(value));
  EXPECT_EQ(value, 2.5f);
}

TEST(NpyTest, WrittenBoolsReadBackAsIntegers) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("weft-npy", "npy", path));
  Tensor t = Tensor::fromInts({3}, {0, 1, 1}, ElementType::I1);
  ASSERT_FALSE(bool(writeNpy(path, t)));
  auto back = readNpy(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->intValues(), llvm::ArrayRef<int64_t>({0, 1, 1}));
  llvm::sys::fs::remove(path);
}

TEST(NpyTest, WriteIntoMissingDirectoryIsBadInput) {
  llvm::Error err = writeNpy("/nonexistent-weft-dir/x.npy", Tensor::scalar(1));
  ASSERT_TRUE(bool(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("cannot write '/nonexistent-weft-dir/x.npy'"),
            std::string::npos)
      << message;
}
