//===- NpyTest.cpp - NumPy .npy files -------------------------------------===//

#include "weft/Exec/Npy.h"
#include "weft/Support/Error.h"
#include "llvm/Support/FileSystem.h"
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
