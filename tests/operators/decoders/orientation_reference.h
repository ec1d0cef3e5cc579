// An independent reference for EXIF orientation: each of the 8 values as a composition of three
// primitive image operations (mirror left-right, mirror top-bottom, transpose), the way PIL's
// ImageOps.exif_transpose names them, rather than orientation.h's per-value index formulas.
#pragma once

#include "tests/operators/decoders/decode_reference.h"

namespace conveyor::testing {

inline Pixels MirrorLeftRight(const Pixels& p) {
  Pixels out{p.height, p.width, p.channels, std::vector<uint8_t>(p.data.size())};
  for (int64_t y = 0; y < p.height; ++y)
    for (int64_t x = 0; x < p.width; ++x)
      for (int c = 0; c < p.channels; ++c)
        out.data[static_cast<size_t>((y * p.width + x) * p.channels + c)] =
            p.data[static_cast<size_t>((y * p.width + (p.width - 1 - x)) * p.channels + c)];
  return out;
}

inline Pixels MirrorTopBottom(const Pixels& p) {
  Pixels out{p.height, p.width, p.channels, std::vector<uint8_t>(p.data.size())};
  for (int64_t y = 0; y < p.height; ++y)
    for (int64_t x = 0; x < p.width; ++x)
      for (int c = 0; c < p.channels; ++c)
        out.data[static_cast<size_t>((y * p.width + x) * p.channels + c)] =
            p.data[static_cast<size_t>(((p.height - 1 - y) * p.width + x) * p.channels + c)];
  return out;
}

inline Pixels Transpose(const Pixels& p) {
  Pixels out{p.width, p.height, p.channels, std::vector<uint8_t>(p.data.size())};
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t x = 0; x < out.width; ++x)
      for (int c = 0; c < p.channels; ++c)
        out.data[static_cast<size_t>((y * out.width + x) * p.channels + c)] =
            p.data[static_cast<size_t>((x * p.width + y) * p.channels + c)];
  return out;
}

// The stored image as shown under EXIF orientation `o`.
inline Pixels ReferenceOrient(const Pixels& p, int o) {
  switch (o) {
    case 2: return MirrorLeftRight(p);                                // flip horizontal
    case 3: return MirrorTopBottom(MirrorLeftRight(p));               // rotate 180
    case 4: return MirrorTopBottom(p);                                // flip vertical
    case 5: return Transpose(p);                                      // transpose
    case 6: return MirrorLeftRight(Transpose(p));                     // rotate 90 clockwise
    case 7: return MirrorTopBottom(MirrorLeftRight(Transpose(p)));    // transverse
    case 8: return MirrorTopBottom(Transpose(p));                     // rotate 90 counter-clockwise
    default: return p;
  }
}

}  // namespace conveyor::testing
