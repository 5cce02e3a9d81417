//===- npy_numpy_crosscheck.cc - Loader vs numpy-written files --*- C++ -*-===//
//
// Usage: npy_numpy_crosscheck DIR
// Loads the files numpy_write_fixtures.py wrote into DIR and checks their
// values, then writes zeroc_*.npy files for numpy_verify_zeroc.py to check.
// Prints "N passed, M failed"; exits non-zero on any failure.
//
//===----------------------------------------------------------------------===//

#include "check_counter.h"

#include "zeroc_rt/zeroc_rt.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using zeroc_rt::test::CheckCounter;

namespace {

class CrossCheck {
public:
  CrossCheck(std::string dir) : dir(std::move(dir)), counter("") {}

  /// Loads `name` and checks dtype, shape and the exact data bytes.
  template <typename T>
  void expectFile(const char *name, zeroc_rt_dtype_t dtype,
                  std::vector<int64_t> dims, std::vector<T> values) {
    std::string path = dir + "/" + name;
    zeroc_rt_npy_t *array = nullptr;
    zeroc_rt_status_t status = zeroc_rt_npy_load(path.c_str(), &array);
    if (!counter.check(status == nullptr, name,
                       zeroc_rt_status_message(status))) {
      zeroc_rt_status_free(status);
      return;
    }
    bool sameShape =
        zeroc_rt_npy_dtype(array) == dtype &&
        zeroc_rt_npy_rank(array) == static_cast<int32_t>(dims.size()) &&
        std::equal(dims.begin(), dims.end(), zeroc_rt_npy_dims(array));
    counter.check(sameShape, std::string(name) + " dtype/shape");
    bool sameData =
        zeroc_rt_npy_nbytes(array) == values.size() * sizeof(T) &&
        (values.empty() || std::memcmp(zeroc_rt_npy_data(array), values.data(),
                                       values.size() * sizeof(T)) == 0);
    counter.check(sameData, std::string(name) + " data");
    zeroc_rt_npy_free(array);
  }

  void expectRejected(const char *name, const char *needle) {
    std::string path = dir + "/" + name;
    zeroc_rt_npy_t *array = nullptr;
    zeroc_rt_status_t status = zeroc_rt_npy_load(path.c_str(), &array);
    std::string message = zeroc_rt_status_message(status);
    counter.check(zeroc_rt_status_code(status) == ZEROC_RT_FORMAT_ERROR &&
                      message.find(needle) != std::string::npos &&
                      message.find(path) != std::string::npos,
                  std::string(name) + " rejected", message);
    zeroc_rt_status_free(status);
    zeroc_rt_npy_free(array);
  }

  template <typename T>
  void save(const char *name, zeroc_rt_dtype_t dtype, std::vector<int64_t> dims,
            std::vector<T> values) {
    std::string path = dir + "/" + name;
    zeroc_rt_status_t status = zeroc_rt_npy_save(
        path.c_str(), dtype, static_cast<int32_t>(dims.size()), dims.data(),
        values.data());
    counter.check(status == nullptr, std::string("save ") + name,
                  zeroc_rt_status_message(status));
    zeroc_rt_status_free(status);
  }

  const CheckCounter &results() const { return counter; }

private:
  std::string dir;
  CheckCounter counter;
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  CrossCheck check(argv[1]);
  std::vector<float> f32(12);
  for (int i = 0; i < 12; ++i)
    f32[i] = static_cast<float>(i) * 0.5f - 1.0f;
  check.expectFile<float>("f32_3x4.npy", ZEROC_RT_DTYPE_F32, {3, 4}, f32);
  check.expectFile<int64_t>("i64_5.npy", ZEROC_RT_DTYPE_I64, {5},
                            {-(int64_t(1) << 40), -1, 0, 1, int64_t(1) << 62});
  check.expectFile<double>("f64_scalar.npy", ZEROC_RT_DTYPE_F64, {}, {3.25});
  check.expectFile<uint8_t>("bool_2x2.npy", ZEROC_RT_DTYPE_BOOL, {2, 2},
                            {1, 0, 0, 1});
  check.expectFile<uint16_t>("f16_4.npy", ZEROC_RT_DTYPE_F16, {4},
                             {0x3C00, 0xC000, 0x3800, 0x7BFF});
  check.expectFile<int32_t>("i32_2x3.npy", ZEROC_RT_DTYPE_I32, {2, 3},
                            {1, -2, 3, -4, 5, -6});
  check.expectFile<uint8_t>("u8_3.npy", ZEROC_RT_DTYPE_U8, {3}, {0, 127, 255});
  check.expectFile<float>("f32_empty_0x3.npy", ZEROC_RT_DTYPE_F32, {0, 3}, {});
  check.expectFile<float>("f32_v2.npy", ZEROC_RT_DTYPE_F32, {2}, {1.5f, -2.5f});
  check.expectFile<float>("f32_v3.npy", ZEROC_RT_DTYPE_F32, {1}, {4.0f});
  check.expectRejected("f32_fortran.npy", "fortran_order");
  check.expectRejected("f32_bigendian.npy", "big-endian");
  check.expectRejected("c64_2.npy", "unsupported dtype");

  check.save<float>("zeroc_f32_2x3.npy", ZEROC_RT_DTYPE_F32, {2, 3},
                    {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f});
  check.save<int64_t>("zeroc_i64_scalar.npy", ZEROC_RT_DTYPE_I64, {}, {-7});
  check.save<uint8_t>("zeroc_bool_3.npy", ZEROC_RT_DTYPE_BOOL, {3}, {1, 0, 1});
  check.save<uint16_t>("zeroc_f16_2.npy", ZEROC_RT_DTYPE_F16, {2},
                       {0x3C00, 0xC000});
  check.save<uint8_t>("zeroc_u8_empty.npy", ZEROC_RT_DTYPE_U8, {0}, {});
  check.save<int32_t>("zeroc_i32_2x1x2.npy", ZEROC_RT_DTYPE_I32, {2, 1, 2},
                      {1, 2, 3, -4});
  check.save<double>(
      "zeroc_f64_4.npy", ZEROC_RT_DTYPE_F64, {4},
      {0.1, -1e300, 5e-324, std::numeric_limits<double>::infinity()});

  std::printf("%d passed, %d failed\n", check.results().passed(),
              check.results().failed());
  return check.results().failed() == 0 ? 0 : 1;
}
