// DecoderPool: the reader's open files — ClipDecoders (a Demuxer with its file open and a
// FrameDecoder with its reference frames) kept between batches, so consecutive clips of one file
// decode on without reopening or seeking, and bounded, so a data set of a million files holds at
// most `max_open` of them.
//
//   Acquire(file) ── an idle decoder of that file (most recently used first)
//                 └─ else a new one from the factory (opens the file), after closing the least
//                    recently used idle ones beyond max_open (a GPU decoder's NVDEC session
//                    then passes to the new file instead of another being created)
//   ~Lease        ── back to the idle list (most recently used first); while more than max_open
//                    decoders exist, the least recently used idle ones are closed
//
// Decoders in use are never closed, so the bound is max(max_open, clips decoded at once): each of
// the pipeline's threads holds at most one. A decoder whose clip failed is dropped, not returned
// (its demuxer may stand anywhere). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "operators/video/clip_decoder.h"

namespace conveyor::ops::video {

class DecoderPool {
 public:
  using Factory = std::function<std::unique_ptr<ClipDecoder>(int64_t file)>;

  DecoderPool(int64_t max_open, Factory factory) : max_open_(max_open), factory_(std::move(factory)) {}

  class Lease {
   public:
    Lease(DecoderPool* pool, int64_t file, std::unique_ptr<ClipDecoder> decoder)
        : pool_(pool), file_(file), decoder_(std::move(decoder)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_ != nullptr && decoder_ != nullptr) pool_->Release(file_, std::move(decoder_));
    }
    ClipDecoder& operator*() const { return *decoder_; }
    ClipDecoder* operator->() const { return decoder_.get(); }
    // The decoder failed: close it instead of returning it.
    void Drop() {
      if (decoder_) pool_->Forget();
      decoder_.reset();
    }

   private:
    DecoderPool* pool_;
    int64_t file_;
    std::unique_ptr<ClipDecoder> decoder_;
  };

  // Throws what the factory throws (the file cannot be opened).
  Lease Acquire(int64_t file);

  int64_t open() const;   // decoders in use and idle
  int64_t opens() const;  // factory calls so far

 private:
  void Release(int64_t file, std::unique_ptr<ClipDecoder> decoder);
  void Forget();
  // Moves the least recently used idle decoders into `closing` while more than max_open exist.
  void TrimIdle(std::vector<std::unique_ptr<ClipDecoder>>* closing);

  const int64_t max_open_;
  Factory factory_;
  mutable std::mutex mutex_;
  std::list<std::pair<int64_t, std::unique_ptr<ClipDecoder>>> idle_;  // most recently used first
  int64_t busy_ = 0;
  int64_t opens_ = 0;
};

}  // namespace conveyor::ops::video
