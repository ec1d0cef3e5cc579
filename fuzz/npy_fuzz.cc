// libFuzzer target: the .npy header parser and the data-size check the numpy reader makes.
// Contract: any bytes either parse into a header whose data lies inside the file (then the data
// bytes are read once, so ASan sees any read past the buffer), or throw a conveyor::Error; nothing
// else (no crash, no other exception, no UB).
#include <cstdint>
#include <string>

#include "core/error.h"
#include "operators/readers/npy_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  try {
    // What NumpyReader::ReadHeader does with a file of `size` bytes: the first 256 bytes, more
    // when the header says it is longer, then the parse and the data-size check.
    size_t head = size < 256 ? size : 256;
    const size_t need = conveyor::ops::NpyHeaderLength(bytes, head, "fuzz.npy");
    if (need > head) {
      if (need > size) return 0;  // the reader's "truncated .npy header"
      head = need;
    }
    const conveyor::ops::NpyHeader h = conveyor::ops::ParseNpyHeader(bytes, head, "fuzz.npy");
    if (h.data_offset + h.data_bytes() > static_cast<int64_t>(size)) return 0;  // "truncated data"
    if (h.data_offset < 0 || static_cast<uint64_t>(h.data_offset) > size) __builtin_trap();
    const int64_t n = h.data_bytes();
    if (n < 0) __builtin_trap();
    volatile uint8_t sum = 0;  // read every data byte: ASan reports a read past the input
    for (int64_t i = 0; i < n; ++i) sum = sum + data[h.data_offset + i];
    // The header we would write for the parsed fields must parse back to the same fields.
    const std::string again = conveyor::ops::MakeNpyHeader(h.dtype, h.shape, h.fortran_order, h.major_version);
    const conveyor::ops::NpyHeader h2 = conveyor::ops::ParseNpyHeader(again.data(), again.size(), "again.npy");
    if (h2.dtype != h.dtype || !(h2.shape == h.shape) || h2.fortran_order != h.fortran_order) __builtin_trap();
  } catch (const conveyor::Error&) {
  }
  return 0;
}
