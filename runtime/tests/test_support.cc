//===- test_support.cc - Shared unit-test helpers ---------------*- C++ -*-===//

#include "test_support.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <unistd.h>

namespace zeroc_rt::test {

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/zeroc_rt_test.XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("mkdtemp failed for " + pattern);
  root = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string npyImage(int major, const std::string &header,
                     const std::string &data) {
  std::string image("\x93NUMPY", 6);
  image += static_cast<char>(major);
  image += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    image += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return image + header + data;
}

std::string paddedNpyImage(int major, const std::string &dict,
                           const std::string &data) {
  size_t preamble = 8 + (major == 1 ? 2 : 4);
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  return npyImage(major, header, data);
}

} // namespace zeroc_rt::test
