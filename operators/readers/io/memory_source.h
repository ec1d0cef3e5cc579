// A ByteSource over bytes already in memory (not owned; they must outlive it): how the fuzz
// targets hand untrusted bytes to code that reads shards through ByteSource.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {

class MemorySource final : public ByteSource {
 public:
  MemorySource(const uint8_t* data, size_t size, std::string name)
      : data_(data), size_(static_cast<int64_t>(size)), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  int64_t Size() const override { return size_; }
  void ReadAt(int64_t offset, void* dst, int64_t bytes) const override {
    if (offset < 0 || bytes < 0 || offset > size_ || bytes > size_ - offset) {
      throw InvalidArgument("\"" + name_ + "\": expected " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + ", the source holds " + std::to_string(size_));
    }
    if (bytes > 0) std::memcpy(dst, data_ + offset, static_cast<size_t>(bytes));
  }

 private:
  const uint8_t* data_;
  int64_t size_;
  std::string name_;
};

}  // namespace conveyor::ops
