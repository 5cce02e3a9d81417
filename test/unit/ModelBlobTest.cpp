//===- ModelBlobTest.cpp - model.bin streamed from copied, referenced and --===//
//===- mapped pieces has the bytes and checksum of the assembled blob -------===//
#include "zeroc/Emit/ModelBlob.h"
#include "zeroc/Support/MappedFiles.h"
#include "zeroc_rt/checksum.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fcntl.h>
#include <random>
#include <string>
#include <unistd.h>

namespace {

std::string readAll(int fd) {
  std::string out;
  char buf[65536];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(ModelBlob, RandomLayoutsMatchTheAssembledBlob) {
  std::mt19937_64 rng(7);
  // A weight file that pieces are mapped from.
  char path[] = "/tmp/zeroc-modelblob-XXXXXX";
  int wf = mkstemp(path);
  ASSERT_GE(wf, 0);
  std::string weights(3 << 20, '\0');
  for (char &c : weights)
    c = static_cast<char>(rng());
  ASSERT_EQ(write(wf, weights.data(), weights.size()),
            static_cast<ssize_t>(weights.size()));
  for (int trial = 0; trial < 40; ++trial) {
    zeroc::ModelBlob blob;
    std::string want;
    std::vector<std::string> keep; // referenced memory must outlive the blob
    int pieces = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < pieces; ++i) {
      switch (rng() % 4) {
      case 0: { // small copy, any length
        std::string s(rng() % 37, '\0');
        for (char &c : s)
          c = static_cast<char>(rng());
        blob.append(s.data(), s.size());
        want += s;
        break;
      }
      case 1: { // referenced heap bytes, past the copy limit
        keep.emplace_back(5000 + rng() % 100000, '\0');
        for (char &c : keep.back())
          c = static_cast<char>(rng());
        blob.reference(llvm::ArrayRef<char>(keep.back().data(), keep.back().size()));
        want += keep.back();
        break;
      }
      case 2: { // a mapped range at an odd offset
        uint64_t off = rng() % (1 << 20), len = 4096 + rng() % (2 << 20);
        std::string err;
        llvm::ArrayRef<char> m = zeroc::mapFileRange(path, off, len, err);
        ASSERT_EQ(m.size(), len) << err;
        EXPECT_TRUE(zeroc::isMappedRange(m.data(), m.size()));
        blob.reference(m);
        want.append(weights, off, len);
        break;
      }
      default: { // alignment
        int64_t a = int64_t(1) << (rng() % 7);
        int64_t before = blob.size();
        int64_t after = blob.align(a);
        EXPECT_EQ(after % a, 0);
        want.append(static_cast<size_t>(after - before), '\0');
      }
      }
    }
    ASSERT_EQ(blob.size(), static_cast<int64_t>(want.size()));
    EXPECT_EQ(blob.checksum(), zeroc_rt_checksum64(want.data(), want.size()))
        << "trial " << trial;
    FILE *f = tmpfile();
    std::string err;
    ASSERT_TRUE(blob.writeTo(fileno(f), err)) << err;
    EXPECT_EQ(readAll(fileno(f)), want) << "trial " << trial;
    fclose(f);
  }
  close(wf);
  unlink(path);
}

TEST(ModelBlob, MappingErrorsNameTheFile) {
  std::string err;
  EXPECT_TRUE(zeroc::mapFileRange("/nonexistent/w.bin", 0, 10, err).empty());
  EXPECT_NE(err.find("/nonexistent/w.bin"), std::string::npos);
  EXPECT_FALSE(zeroc::isMappedRange(err.data(), 1));
}

} // namespace
