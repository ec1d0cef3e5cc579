// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum TFRecord files carry on every
// record's length and data. Our own implementation: table-driven slicing-by-8 everywhere, and the
// SSE4.2 `crc32` instruction when the CPU has it (chosen once, at run time). Both give identical
// results; tests check them against published vectors (CRC32C("123456789") = 0xE3069283).
//
// TFRecord stores checksums "masked" (rotated right by 15 bits, plus 0xa282ead8), because a CRC of
// data that itself holds CRCs is weak; MaskCrc32c/UnmaskCrc32c convert.
#pragma once

#include <cstddef>
#include <cstdint>

namespace conveyor::ops {

// CRC32C of `size` bytes at `data`, continuing from `crc` (the CRC of the bytes before; 0 to
// start): Crc32c(ab) == Crc32c(b, Crc32c(a)). Uses the fastest implementation this CPU has.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

// The two implementations, for tests and benchmarks. Crc32cHardware requires Crc32cHasHardware().
uint32_t Crc32cPortable(const void* data, size_t size, uint32_t crc = 0);
uint32_t Crc32cHardware(const void* data, size_t size, uint32_t crc = 0);
bool Crc32cHasHardware();

constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;

constexpr uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta; }
constexpr uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - kCrc32cMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace conveyor::ops
