// ReadyEvent: the "data is ready after this event" slot that tensors and tensor lists share.
#pragma once

#include <memory>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"

namespace conveyor {

class ReadyEvent {
 public:
  // The event recorded on the stream that last wrote the data (null: ready now).
  const std::shared_ptr<cuda::Event>& ready_event() const { return ready_; }
  void set_ready_event(std::shared_ptr<cuda::Event> e) { ready_ = std::move(e); }
  // Records (creating if needed) the ready event on `stream`: the data is ready after its work.
  void RecordReady(cuda::StreamView stream) {
    if (!ready_) ready_ = std::make_shared<cuda::Event>(cuda::Event::Create());
    ready_->Record(stream);
  }
  // Orders `stream` after the producer's writes (no host blocking).
  void WaitReady(cuda::StreamView stream) const {
    if (ready_) ready_->Wait(stream);
  }

 private:
  // Shared: copies and views of a tensor are ready when the original is.
  std::shared_ptr<cuda::Event> ready_;
};

}  // namespace conveyor
