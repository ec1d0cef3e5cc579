#include "operators/decoders/decode_balance.h"

#include <algorithm>

namespace conveyor::ops {
namespace {

void Smooth(double& rate, double pixels, double seconds) {
  if (pixels <= 0 || seconds <= 0) return;
  const double r = pixels / seconds;
  rate = rate == 0 ? r : (1 - DecodeBalance::kEma) * rate + DecodeBalance::kEma * r;
}

}  // namespace

void DecodeBalance::AddEngines(double pixels, double seconds) {
  Smooth(engines_rate_, pixels, seconds);
  Update();
}

void DecodeBalance::AddCuda(double pixels, double seconds) {
  Smooth(cuda_rate_, pixels, seconds);
  Update();
}

void DecodeBalance::Update() {
  if (fixed_ || engines_rate_ <= 0 || cuda_rate_ <= 0) return;
  share_ = std::clamp(engines_rate_ / (engines_rate_ + cuda_rate_), kMinShare, 1 - kMinShare);
}

void DecodeBalance::Split(const std::vector<int64_t>& pixels, std::vector<uint8_t>& to_engines, double engines_fixed,
                          double cuda_fixed) const {
  to_engines.assign(pixels.size(), 0);
  double candidates = 0;
  for (int64_t p : pixels) candidates += static_cast<double>(std::max<int64_t>(p, 1));
  double share = share_;
  if (!fixed_ && candidates > 0) {  // the candidates' share that evens the whole loads out
    const double engines_target = share_ * (engines_fixed + cuda_fixed + candidates) - engines_fixed;
    share = std::clamp(engines_target / candidates, kMinShare, 1 - kMinShare);
  }
  double total = 0, engines = 0;
  for (size_t k = 0; k < pixels.size(); ++k) {
    const double p = static_cast<double>(std::max<int64_t>(pixels[k], 1));
    total += p;
    // Take the image when that keeps the engines' pixels nearer their share of the total so far.
    if (engines + p - share * total <= share * total - engines) {
      to_engines[k] = 1;
      engines += p;
    }
  }
}

}  // namespace conveyor::ops
