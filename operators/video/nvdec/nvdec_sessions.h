// NVDEC sessions — a cuvid decoder with its surfaces plus the stream its frames are converted on —
// and the cache that hands them from a closed file to the next one opened.
//
// Creating a decoder allocates its surfaces and destroying one frees them (cuMemFree: a wait for
// the whole device, every other thread's decoding included), tens of milliseconds between them.
// The reader opens files far more often than that allows (its LRU of open files is smaller than a
// shuffled data set), and a decoder keeps no state of its own between streams — the parser owns
// the references — so a file closed gives its session to the cache, and a file of the same format
// opened next takes it instead of creating one.
//
//   NvdecFrameDecoder (file A) ── closed ──► Give(session) ──► idle (most recent first, at most
//                                                              max_idle and max_idle_bytes;
//                                                              beyond: destroyed)
//   NvdecFrameDecoder (file B) ── sequence callback ──► Take(wanted format) ── a compatible idle
//                                                        session, else Create
//
// Compatible: the same device, codec, chroma format, bit depth, coded size, display area, output
// format and deinterlacing, and at least as many decode surfaces (the parser is told the session's
// count). Thread-safe. A session holds a reference to its device's primary context, so it outlives
// every decoder that used it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "operators/video/nvdec/nv12_to_rgb_gpu.h"
#include "operators/video/nvdec/nvdec_loader.h"

namespace conveyor::ops::video {

class NvdecSession {
 public:
  // Creates the decoder `info` describes and its stream in the primary context of `device`. Null
  // and `why` filled on failure.
  static std::unique_ptr<NvdecSession> Create(const NvdecApi& api, CUdevice device, const CUVIDDECODECREATEINFO& info,
                                              std::string* why);
  ~NvdecSession();
  NvdecSession(const NvdecSession&) = delete;
  NvdecSession& operator=(const NvdecSession&) = delete;

  CUvideodecoder decoder() const { return decoder_; }
  const CUVIDDECODECREATEINFO& created() const { return created_; }
  CUdevice device() const { return device_; }
  OutputStream& stream() const { return *stream_; }
  // About the device memory its surfaces take (decode and output surfaces, NV12 or P016).
  int64_t bytes() const;

 private:
  NvdecSession() = default;
  const NvdecApi* api_ = nullptr;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  CUvideodecoder decoder_ = nullptr;
  CUVIDDECODECREATEINFO created_{};
  std::unique_ptr<OutputStream> stream_;
};

// True when a session made with `have` decodes what `want` asks for (above).
bool CompatibleSession(const CUVIDDECODECREATEINFO& have, const CUVIDDECODECREATEINFO& want);

class NvdecSessionCache {
 public:
  static constexpr int kDefaultMaxIdle = 8;  // about the decoding threads: one file closed per thread at once
  static constexpr int64_t kDefaultMaxIdleBytes = int64_t{1} << 30;  // ~5 sessions of 4K, 50 of 720p
  explicit NvdecSessionCache(int max_idle = kDefaultMaxIdle, int64_t max_idle_bytes = kDefaultMaxIdleBytes)
      : max_idle_(max_idle), max_idle_bytes_(max_idle_bytes) {}

  // An idle session of `device` compatible with `want`, or null (the caller creates one).
  std::unique_ptr<NvdecSession> Take(CUdevice device, const CUVIDDECODECREATEINFO& want);
  // Keeps `session` for a later Take; beyond max_idle sessions or max_idle_bytes of surfaces the
  // least recently given are destroyed.
  void Give(std::unique_ptr<NvdecSession> session);
  // A session newly created for the cache's users (counted for created()).
  std::unique_ptr<NvdecSession> Create(const NvdecApi& api, CUdevice device, const CUVIDDECODECREATEINFO& info,
                                       std::string* why);

  int64_t created() const;  // sessions created through Create
  int64_t reused() const;   // Takes answered with an idle session
  int64_t idle() const;

 private:
  const int max_idle_;
  const int64_t max_idle_bytes_;
  mutable std::mutex mutex_;
  std::list<std::unique_ptr<NvdecSession>> idle_;  // most recently given first
  int64_t idle_bytes_ = 0;
  int64_t created_ = 0, reused_ = 0;
};

// cuvidGetDecoderCaps for (device, codec, 4:2:0, bit depth), asked of the driver once per process:
// every file opened asks it twice. Call with the device's context current.
CUresult DecoderCaps(const NvdecApi& api, CUdevice device, cudaVideoCodec codec, int bit_depth, CUVIDDECODECAPS* caps);

}  // namespace conveyor::ops::video
