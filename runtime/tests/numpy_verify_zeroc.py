#===- numpy_verify_zeroc.py - numpy reads what zeroc_rt_npy_save wrote -----===#
#
# Usage: numpy_verify_zeroc.py DIR
# Checks the zeroc_*.npy files written by npy_numpy_crosscheck.cc. Keep the
# expected values in sync with that file.
#
#===------------------------------------------------------------------------===#

import os
import sys

import numpy as np

directory = sys.argv[1]
expected = {
    "zeroc_f32_2x3.npy": np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25,
    "zeroc_i64_scalar.npy": np.array(-7, np.int64),
    "zeroc_bool_3.npy": np.array([True, False, True]),
    "zeroc_f16_2.npy": np.array([1.0, -2.0], np.float16),
    "zeroc_u8_empty.npy": np.zeros((0,), np.uint8),
    "zeroc_i32_2x1x2.npy": np.array([[[1, 2]], [[3, -4]]], np.int32),
    "zeroc_f64_4.npy": np.array([0.1, -1e300, 5e-324, np.inf], np.float64),
}
passed = failed = 0
for name, want in expected.items():
    try:
        got = np.load(os.path.join(directory, name), allow_pickle=False)
        ok = (got.dtype == want.dtype and got.shape == want.shape
              and np.array_equal(got, want) and got.flags.c_contiguous)
        detail = "" if ok else f"got {got.dtype}{got.shape} {got!r}"
    except Exception as error:  # noqa: BLE001 - report any failure
        ok, detail = False, repr(error)
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name}: {detail}", file=sys.stderr)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
