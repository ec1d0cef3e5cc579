// EnginesPath's support check: which of the engines' images nvJPEG must vet first (Trusted), and
// the check itself over the pool's threads (engines_path.h).
#include <string>
#include <vector>

#include "operators/decoders/engines_path.h"
#include "operators/decoders/engines_path_state.h"

namespace conveyor::ops {

bool EnginesPath::Trusted(const GpuDecodeSample& smp) const {
  if (check_all_ || options_.engines_check == EnginesCheck::kAlways) return false;
  if (options_.engines_check == EnginesCheck::kNever) return true;
  auto side_ok = [](int64_t x) { return x >= 16 && x <= 16384; };
  return smp.common_layout && !smp.progressive && side_ok(smp.height) && side_ok(smp.width);
}

void EnginesPath::Check(int s, const std::vector<GpuDecodeSample>& samples, const Workspace& ws,
                        const std::function<std::string(int)>& sample_where, std::vector<int>* refused,
                        int64_t* unchecked) {
  Slot& slot = SlotAt(s);
  const NvjpegApi& a = lib_->api();
  const int n = static_cast<int>(samples.size());
  std::vector<int> all;
  for (int p = 0; p < slot.parts_used; ++p) {
    auto& streams = slot.streams[static_cast<size_t>(p)];
    auto& params = slot.params[static_cast<size_t>(p)];
    while (static_cast<int>(streams.size()) < n) {
      nvjpegJpegStream_t js = nullptr;
      nvjpegDecodeParams_t dp = nullptr;
      CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(Handle(p), &js), "engines");
      streams.push_back(js);
      CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(Handle(p), &dp), "engines");
      params.push_back(dp);
    }
    for (const Call& call : slot.parts[static_cast<size_t>(p)].calls) {
      all.insert(all.end(), call.images.begin(), call.images.end());
    }
  }
  slot.ok.assign(static_cast<size_t>(n), 0);
  const nvjpegOutputFormat_t format = FormatOf(options_.color);
  // The trusted images only need their decode parameters: set here, outside the parallel loop.
  std::vector<int> check;
  check.reserve(all.size());
  for (int i : all) {
    const GpuDecodeSample& smp = samples[static_cast<size_t>(i)];
    if (!Trusted(smp) || (!IsWhole(smp) && a.nvjpegDecodeBatchedEx == nullptr)) {
      check.push_back(i);
      continue;
    }
    const size_t p = slot.part_of[static_cast<size_t>(i)];
    nvjpegDecodeParams_t dp = slot.params[p][static_cast<size_t>(i)];
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(dp, format), sample_where(i));
    if (a.nvjpegDecodeBatchedEx != nullptr) SetRoi(a, dp, smp, sample_where(i));
    slot.ok[static_cast<size_t>(i)] = 1;
  }
  *unchecked += static_cast<int64_t>(all.size() - check.size());
  ws.ParallelFor(static_cast<int64_t>(check.size()), 8, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int i = check[static_cast<size_t>(k)];
      const int p = slot.part_of[static_cast<size_t>(i)];
      const GpuDecodeSample& smp = samples[static_cast<size_t>(i)];
      nvjpegJpegStream_t js = slot.streams[static_cast<size_t>(p)][static_cast<size_t>(i)];
      nvjpegDecodeParams_t dp = slot.params[static_cast<size_t>(p)][static_cast<size_t>(i)];
      // A header the engines cannot parse goes down the chain; the next path reports it properly.
      if (a.nvjpegJpegStreamParseHeader(Handle(p), smp.data, smp.size, js) != NVJPEG_STATUS_SUCCESS) continue;
      CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(dp, format), sample_where(i));
      int unsupported = 1;
      if (a.nvjpegDecodeBatchedSupportedEx != nullptr && a.nvjpegDecodeBatchedEx != nullptr) {
        SetRoi(a, dp, smp, sample_where(i));
        CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupportedEx(Handle(p), js, dp, &unsupported), sample_where(i));
      } else if (IsWhole(smp)) {
        CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupported(Handle(p), js, &unsupported), sample_where(i));
      }
      slot.ok[static_cast<size_t>(i)] = unsupported == 0 ? 1 : 0;  // the documented "0 = supported"
    }
  });
  for (int p = 0; p < slot.parts_used; ++p) {
    for (Call& call : slot.parts[static_cast<size_t>(p)].calls) {
      auto kept = std::stable_partition(call.images.begin(), call.images.end(),
                                        [&](int i) { return slot.ok[static_cast<size_t>(i)] != 0; });
      refused->insert(refused->end(), kept, call.images.end());
      call.images.erase(kept, call.images.end());
    }
  }
}

}  // namespace conveyor::ops
