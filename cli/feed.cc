#include "cli/feed.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/tensor/half.h"

namespace conveyor::cli {
namespace {

uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool ParseExtent(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoll(s);
  return true;
}

std::string Where(const OpSpec& node) {
  const SourceLocation at = node.Location("op");
  return (at.empty() ? "" : at.ToString() + ": ") + node.Describe();
}

template <typename T>
void Fill(void* data, int64_t n, uint64_t& state, double lo, double hi, bool integer) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>((state = Mix(state)) >> 11) * 0x1.0p-53;
    p[i] = static_cast<T>(integer ? std::floor(lo + u * (hi - lo + 1)) : lo + u * (hi - lo));
  }
}

}  // namespace

FeedSpec ParseFeed(const std::string& text) {
  const size_t eq = text.find('=');
  auto bad = [&](const std::string& why) {
    return InvalidArgument("--feed " + text + ": " + why +
                           "; expected NODE=SHAPE with SHAPE like 224x224x3 or 200-480x200-640x3 (LO-HI: drawn per sample)");
  };
  if (eq == std::string::npos || eq == 0) throw bad("no NODE=");
  FeedSpec f;
  f.node = text.substr(0, eq);
  f.text = text;
  const std::string shape = text.substr(eq + 1);
  if (shape.empty()) throw bad("empty shape");
  size_t start = 0;
  while (start <= shape.size()) {
    const size_t x = std::min(shape.find('x', start), shape.size());
    const std::string dim = shape.substr(start, x - start);
    const size_t dash = dim.find('-');
    int64_t lo = 0, hi = 0;
    const bool ok = dash == std::string::npos ? ParseExtent(dim, &lo) && (hi = lo, true)
                                              : ParseExtent(dim.substr(0, dash), &lo) && ParseExtent(dim.substr(dash + 1), &hi);
    if (!ok) throw bad("\"" + dim + "\" is not an extent (N or LO-HI)");
    if (lo > hi) throw bad("range " + dim + " has LO > HI");
    f.dims.emplace_back(lo, hi);
    start = x + 1;
  }
  return f;
}

void CheckFeed(const FeedSpec& feed, const OpSpec& node) {
  const int64_t ndim = node.Arg<int64_t>("ndim");
  if (ndim >= 0 && ndim != static_cast<int64_t>(feed.dims.size())) {
    throw InvalidArgument(Where(node) + ": --feed " + feed.text + " gives " + std::to_string(feed.dims.size()) +
                          "-D samples; the node declares ndim " + std::to_string(ndim));
  }
}

TensorListCPU MakeFeedBatch(const FeedSpec& feed, const OpSpec& node, int batch_size, uint64_t seed,
                            int64_t iteration) {
  const DType dtype = node.Arg<DType>("dtype");
  uint64_t state = Mix(seed ^ Mix(HashName(node.name()) ^ Mix(static_cast<uint64_t>(iteration))));
  std::vector<Shape> shapes;
  for (int s = 0; s < batch_size; ++s) {
    Shape shape;
    for (const auto& [lo, hi] : feed.dims) {
      const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
      shape.push_back(lo + static_cast<int64_t>((state = Mix(state)) % span));
    }
    shapes.push_back(shape);
  }
  TensorListCPU batch;
  batch.Resize(shapes, dtype);
  batch.set_layout(Layout(node.Arg<std::string>("layout")));
  for (int s = 0; s < batch_size; ++s) {
    void* p = batch.raw_sample(s);
    const int64_t n = shapes[static_cast<size_t>(s)].num_elements();
    switch (dtype) {
      case DType::kBool: Fill<uint8_t>(p, n, state, 0, 1, true); break;
      case DType::kUInt8: Fill<uint8_t>(p, n, state, 0, 255, true); break;
      case DType::kInt8: Fill<int8_t>(p, n, state, 0, 127, true); break;
      case DType::kUInt16: Fill<uint16_t>(p, n, state, 0, 255, true); break;
      case DType::kInt16: Fill<int16_t>(p, n, state, 0, 255, true); break;
      case DType::kInt32: Fill<int32_t>(p, n, state, 0, 255, true); break;
      case DType::kInt64: Fill<int64_t>(p, n, state, 0, 255, true); break;
      case DType::kFloat32: Fill<float>(p, n, state, 0, 1, false); break;
      case DType::kFloat64: Fill<double>(p, n, state, 0, 1, false); break;
      case DType::kFloat16:
      case DType::kBFloat16: {
        std::vector<float> tmp(static_cast<size_t>(n));
        Fill<float>(tmp.data(), n, state, 0, 1, false);
        uint16_t* h = static_cast<uint16_t*>(p);
        for (int64_t i = 0; i < n; ++i) {
          h[i] = dtype == DType::kFloat16 ? FloatToHalfBits(tmp[static_cast<size_t>(i)])
                                          : FloatToBFloat16Bits(tmp[static_cast<size_t>(i)]);
        }
        break;
      }
    }
  }
  return batch;
}

}  // namespace conveyor::cli
