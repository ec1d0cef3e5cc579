#include "operators/decoders/decode_trace.h"

#include <algorithm>
#include <sstream>

namespace conveyor::ops {

void DecodeTrace::AddImage(TracedImage image) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::thread::id me = std::this_thread::get_id();
  auto it = std::find(threads_.begin(), threads_.end(), me);
  if (it == threads_.end()) it = threads_.insert(threads_.end(), me);
  image.thread = static_cast<int>(it - threads_.begin());
  images_.push_back(image);
}

void DecodeTrace::AddEngines(int part, int images, int64_t start_ns, int64_t end_ns, std::string calls) {
  std::lock_guard<std::mutex> lock(mu_);
  parts_.push_back({part, images, start_ns, end_ns, std::move(calls)});
}

std::string DecodeTrace::Line() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream line;
  line << "conveyor: decoder trace: call " << call_ << ": phase A " << phase_a_ns_ / 1000 << " us (route "
       << route_ns_ / 1000 << ", engines' check " << check_ns_ / 1000 << "); engines";
  for (const Part& p : parts_) {
    line << " [part " << p.part << ": " << p.images << " images " << p.start_ns / 1000 << "-" << p.end_ns / 1000
         << " us: " << p.calls << "]";
  }
  line << "; images (thread:start-end us [path kpixels subsampling p(rogressive), CUDA parse/wait/host/issue(transfer) us, allocator calls/us, gpu-huffman]):";
  for (const TracedImage& t : images_) {
    line << " " << t.thread << ":" << t.start_ns / 1000 << "-" << t.end_ns / 1000 << "[" << DecodePathName(t.path) << " "
         << t.pixels / 1000 << "k " << ChromaSubsamplingName(t.subsampling) << (t.progressive ? " p" : "");
    if (t.path == DecodePath::kCuda) {
      line << " " << t.parse_ns / 1000 << "/" << t.wait_ns / 1000 << "/" << t.host_ns / 1000 << "/"
           << t.issue_ns / 1000 << "(" << t.transfer_ns / 1000 << ")";
      if (t.alloc_calls > 0) line << " a" << t.alloc_calls << "/" << t.alloc_ns / 1000;
      if (t.gpu_huffman) line << " gpu-huffman";
    }
    line << "]";
  }
  return line.str();
}

}  // namespace conveyor::ops
