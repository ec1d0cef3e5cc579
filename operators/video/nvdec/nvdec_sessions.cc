#include "operators/video/nvdec/nvdec_sessions.h"

#include <map>
#include <tuple>
#include <vector>

namespace conveyor::ops::video {

std::unique_ptr<NvdecSession> NvdecSession::Create(const NvdecApi& api, CUdevice device,
                                                   const CUVIDDECODECREATEINFO& info, std::string* why) {
  std::unique_ptr<NvdecSession> s(new NvdecSession());
  CUresult r = api.cu->cuDevicePrimaryCtxRetain(&s->ctx_, device);
  if (r != CUDA_SUCCESS) {
    *why = CuResultText(api, r, "cuDevicePrimaryCtxRetain");
    return nullptr;
  }
  s->api_ = &api;  // from here on the destructor releases the context
  s->device_ = device;
  NvdecContextScope scope(&api, s->ctx_);
  CUVIDDECODECREATEINFO ci = info;
  r = api.cuvid->cuvidCreateDecoder(&s->decoder_, &ci);
  if (r != CUDA_SUCCESS) {
    s->decoder_ = nullptr;
    *why = CuResultText(api, r, "cuvidCreateDecoder");
    return nullptr;
  }
  s->created_ = ci;
  s->stream_ = OutputStream::Create(why);
  if (s->stream_ == nullptr) return nullptr;
  return s;
}

NvdecSession::~NvdecSession() {
  if (api_ == nullptr) return;
  {
    NvdecContextScope scope(api_, ctx_);
    stream_.reset();
    if (decoder_ != nullptr) api_->cuvid->cuvidDestroyDecoder(decoder_);
  }
  api_->cu->cuDevicePrimaryCtxRelease(device_);
}

int64_t NvdecSession::bytes() const {
  const int64_t sample = created_.OutputFormat == cudaVideoSurfaceFormat_P016 ? 2 : 1;
  const auto area = [](auto w, auto h) { return static_cast<int64_t>(w) * static_cast<int64_t>(h); };
  const int64_t decode = area(created_.ulWidth, created_.ulHeight) * 3 / 2 * sample;
  const int64_t output = area(created_.ulTargetWidth, created_.ulTargetHeight) * 3 / 2 * sample;
  return decode * static_cast<int64_t>(created_.ulNumDecodeSurfaces) +
         output * static_cast<int64_t>(created_.ulNumOutputSurfaces);
}

bool CompatibleSession(const CUVIDDECODECREATEINFO& have, const CUVIDDECODECREATEINFO& want) {
  return have.CodecType == want.CodecType && have.ChromaFormat == want.ChromaFormat &&
         have.bitDepthMinus8 == want.bitDepthMinus8 && have.ulWidth == want.ulWidth &&
         have.ulHeight == want.ulHeight && have.ulMaxWidth == want.ulMaxWidth && have.ulMaxHeight == want.ulMaxHeight &&
         have.display_area.left == want.display_area.left && have.display_area.top == want.display_area.top &&
         have.display_area.right == want.display_area.right && have.display_area.bottom == want.display_area.bottom &&
         have.ulTargetWidth == want.ulTargetWidth && have.ulTargetHeight == want.ulTargetHeight &&
         have.OutputFormat == want.OutputFormat && have.DeinterlaceMode == want.DeinterlaceMode &&
         have.ulCreationFlags == want.ulCreationFlags && have.ulNumOutputSurfaces == want.ulNumOutputSurfaces &&
         have.ulNumDecodeSurfaces >= want.ulNumDecodeSurfaces;
}

std::unique_ptr<NvdecSession> NvdecSessionCache::Take(CUdevice device, const CUVIDDECODECREATEINFO& want) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    if ((*it)->device() != device || !CompatibleSession((*it)->created(), want)) continue;
    std::unique_ptr<NvdecSession> s = std::move(*it);
    idle_.erase(it);
    idle_bytes_ -= s->bytes();
    ++reused_;
    return s;
  }
  return nullptr;
}

void NvdecSessionCache::Give(std::unique_ptr<NvdecSession> session) {
  if (session == nullptr) return;
  std::vector<std::unique_ptr<NvdecSession>> closing;  // destroyed outside the lock (frees device memory)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_bytes_ += session->bytes();
    idle_.push_front(std::move(session));
    while (!idle_.empty() && (static_cast<int>(idle_.size()) > max_idle_ || idle_bytes_ > max_idle_bytes_)) {
      idle_bytes_ -= idle_.back()->bytes();
      closing.push_back(std::move(idle_.back()));
      idle_.pop_back();
    }
  }
}

std::unique_ptr<NvdecSession> NvdecSessionCache::Create(const NvdecApi& api, CUdevice device,
                                                        const CUVIDDECODECREATEINFO& info, std::string* why) {
  std::unique_ptr<NvdecSession> s = NvdecSession::Create(api, device, info, why);
  if (s != nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++created_;
  }
  return s;
}

int64_t NvdecSessionCache::created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return created_;
}

int64_t NvdecSessionCache::reused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reused_;
}

int64_t NvdecSessionCache::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(idle_.size());
}

CUresult DecoderCaps(const NvdecApi& api, CUdevice device, cudaVideoCodec codec, int bit_depth, CUVIDDECODECAPS* caps) {
  using Key = std::tuple<CUdevice, int, int>;
  static std::mutex mutex;
  static auto* known = new std::map<Key, CUVIDDECODECAPS>();  // never freed: plain data for the process's life
  const Key key{device, static_cast<int>(codec), bit_depth};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = known->find(key);
    if (it != known->end()) {
      *caps = it->second;
      return CUDA_SUCCESS;
    }
  }
  CUVIDDECODECAPS asked{};
  asked.eCodecType = codec;
  asked.eChromaFormat = cudaVideoChromaFormat_420;
  asked.nBitDepthMinus8 = static_cast<unsigned>(bit_depth - 8);
  const CUresult r = api.cuvid->cuvidGetDecoderCaps(&asked);
  if (r != CUDA_SUCCESS) return r;  // not remembered: a transient failure is asked again
  std::lock_guard<std::mutex> lock(mutex);
  known->emplace(key, asked);
  *caps = asked;
  return CUDA_SUCCESS;
}

}  // namespace conveyor::ops::video
