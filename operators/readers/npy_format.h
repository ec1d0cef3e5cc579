// The NumPy .npy format (versions 1.0, 2.0, 3.0), read and written by our own code.
//
//   "\x93NUMPY" major minor | header length (u16 LE for 1.x, u32 LE for 2.x/3.x) | header | data
//   header: a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//           padded with spaces and a final '\n' so the data starts 64-byte aligned (3.0: UTF-8).
//
// | descr accepted                              | rejected with a message                  |
// |---------------------------------------------|------------------------------------------|
// | |b1 |u1 |i1 <u2 <i2 <i4 <i8 <f2 <f4 <f8     | '>' (big-endian), object ('O'), strings,  |
// | ('=' and '|' for little-endian too)         | structured ('[...]'), other widths        |
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor::ops {

struct NpyHeader {
  DType dtype = DType::kUInt8;
  Shape shape;
  bool fortran_order = false;
  int64_t data_offset = 0;  // bytes from the start of the file
  int major_version = 1;
  int64_t data_bytes() const { return shape.num_elements() * static_cast<int64_t>(DTypeSize(dtype)); }
};

// The bytes needed to parse the header (>= 12): 0 while `size` < 12 would not tell.
size_t NpyHeaderLength(const char* data, size_t size, const std::string& where);
// Parses the header from the first `size` bytes of a file (at least NpyHeaderLength of them).
// Throws InvalidArgument "<where>: <what was wrong>".
NpyHeader ParseNpyHeader(const char* data, size_t size, const std::string& where);
// A complete header (magic to padding) for the given array; version 1, 2 or 3.
std::string MakeNpyHeader(DType dtype, const Shape& shape, bool fortran_order, int major_version = 1);

}  // namespace conveyor::ops
