#include <vector>

#include "operators/color/histogram.h"

namespace conveyor::ops {

void HistogramCpu(const HistogramSample& s) {
  const int c = s.channels;
  std::vector<int64_t> hist(static_cast<size_t>(c) * 256, 0);
  std::vector<uint8_t> lut(static_cast<size_t>(c) * 256);
  for (int64_t e = 0; e < s.count; ++e) ++hist[static_cast<size_t>(e % c) * 256 + s.in[e]];
  for (int ch = 0; ch < c; ++ch) BuildLut(s.mode, &hist[static_cast<size_t>(ch) * 256], &lut[static_cast<size_t>(ch) * 256]);
  for (int64_t e = 0; e < s.count; ++e) s.out[e] = lut[static_cast<size_t>(e % c) * 256 + s.in[e]];
}

}  // namespace conveyor::ops
