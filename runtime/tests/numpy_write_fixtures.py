#===- numpy_write_fixtures.py - .npy files written by numpy itself ---------===#
#
# Usage: numpy_write_fixtures.py OUT_DIR
# Recreates OUT_DIR and fills it with the files npy_numpy_crosscheck.cc loads.
# Keep the values in sync with that file.
#
#===------------------------------------------------------------------------===#

import os
import shutil
import sys

import numpy as np

out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)


def path(name):
    return os.path.join(out, name)


np.save(path("f32_3x4.npy"),
        np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(0.5) - 1)
np.save(path("i64_5.npy"), np.array([-(2**40), -1, 0, 1, 2**62], np.int64))
np.save(path("f64_scalar.npy"), np.array(3.25, dtype=np.float64))
np.save(path("bool_2x2.npy"), np.array([[True, False], [False, True]]))
np.save(path("f16_4.npy"), np.array([1.0, -2.0, 0.5, 65504.0], np.float16))
np.save(path("i32_2x3.npy"), np.array([[1, -2, 3], [-4, 5, -6]], np.int32))
np.save(path("u8_3.npy"), np.array([0, 127, 255], np.uint8))
np.save(path("f32_empty_0x3.npy"), np.zeros((0, 3), np.float32))
with open(path("f32_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, np.array([1.5, -2.5], np.float32),
                              version=(2, 0))
with open(path("f32_v3.npy"), "wb") as f:
    np.lib.format.write_array(f, np.array([4.0], np.float32), version=(3, 0))
np.save(path("f32_fortran.npy"),
        np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save(path("f32_bigendian.npy"), np.arange(3, dtype=">f4"))
np.save(path("c64_2.npy"), np.array([1 + 2j, 3], np.complex64))
print("wrote", len(os.listdir(out)), "files to", out)
