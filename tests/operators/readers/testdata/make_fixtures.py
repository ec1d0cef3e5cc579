"""Writes the .npy fixtures of numpy_reader_test with NumPy's own writer (run from this folder:
/usr/bin/python3 make_fixtures.py). Element i (C order) of every array is Value(i) below, which the
test computes independently."""
import numpy as np

def values(shape, dtype):
    n = int(np.prod(shape)) if len(shape) else 1
    i = np.arange(n)
    if dtype == np.bool_:
        v = (i % 3) == 0
    elif np.issubdtype(dtype, np.unsignedinteger):
        v = (i * 7 + 3) % 11
    elif np.issubdtype(dtype, np.integer):
        v = (i * 7 + 3) % 11 - 5
    else:
        v = ((i * 7 + 3) % 11 - 5) / 4.0
    return v.astype(dtype).reshape(shape)

for name in ["bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32", "float64"]:
    np.save(f"{name}_c.npy", values((3, 4, 2), np.dtype(name)))
for name in ["float32", "int16"]:
    np.save(f"{name}_f.npy", np.asfortranarray(values((3, 4, 2), np.dtype(name))))
for version in [(2, 0), (3, 0)]:
    with open(f"float32_v{version[0]}.npy", "wb") as f:
        np.lib.format.write_array(f, values((3, 4, 2), np.float32), version=version)
np.save("scalar_int32.npy", values((), np.int32))
np.save("vector_float64.npy", values((5,), np.float64))
np.save("empty_uint8.npy", values((0, 3), np.uint8))
np.save("bigendian_float32.npy", values((2, 2), np.dtype(">f4")))
np.save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
