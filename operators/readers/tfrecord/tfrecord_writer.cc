#include "operators/readers/tfrecord/tfrecord_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "operators/readers/tfrecord/tf_example.pb.h"

namespace conveyor::ops {
namespace {

std::string Temporary(const std::string& path) { return path + ".tmp"; }

}  // namespace

TfRecordWriter::TfRecordWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(Temporary(path_).c_str(), "wb");
  if (file_ == nullptr) throw InvalidArgument("\"" + path_ + "\": cannot write: " + std::strerror(errno));
}

TfRecordWriter::~TfRecordWriter() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::error_code ignored;
  std::filesystem::remove(Temporary(path_), ignored);
}

std::string TfRecordWriter::SerializeExample(const std::vector<ExampleFeature>& features) {
  tfexample::Example example;
  for (const ExampleFeature& f : features) {
    tfexample::FeatureEntry* entry = example.mutable_features()->add_feature();
    entry->set_key(f.name);
    tfexample::Feature* value = entry->mutable_value();
    switch (f.kind) {
      case ExampleFeature::kBytes:
        for (const std::string& b : f.bytes) value->mutable_bytes_list()->add_value(b);
        break;
      case ExampleFeature::kInt64:
        value->mutable_int64_list()->mutable_value()->Add(f.ints.begin(), f.ints.end());
        break;
      case ExampleFeature::kFloat:
        value->mutable_float_list()->mutable_value()->Add(f.floats.begin(), f.floats.end());
        break;
    }
  }
  return example.SerializeAsString();
}

void TfRecordWriter::Write(const std::vector<ExampleFeature>& features) {
  const std::string data = SerializeExample(features);
  WriteRecord({reinterpret_cast<const uint8_t*>(data.data()), data.size()});
}

void TfRecordWriter::WriteRecord(std::span<const uint8_t> data) {
  if (file_ == nullptr) throw InvalidArgument("\"" + path_ + "\": written after Close()");
  const std::string framed = FrameTfRecord(data);
  if (std::fwrite(framed.data(), 1, framed.size(), file_) != framed.size()) {
    throw InvalidArgument("\"" + path_ + "\": write failed: " + std::strerror(errno));
  }
  spans_.push_back({offset_, static_cast<int64_t>(framed.size()), 0});
  offset_ += static_cast<int64_t>(framed.size());
}

void TfRecordWriter::Close() {
  if (file_ == nullptr) return;
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) throw InvalidArgument("\"" + path_ + "\": write failed: " + std::strerror(errno));
  const std::string index = path_ + ".idx", text = FormatTfRecordIndex(spans_);
  std::FILE* idx = std::fopen(Temporary(index).c_str(), "wb");
  bool written = idx != nullptr && std::fwrite(text.data(), 1, text.size(), idx) == text.size();
  if (idx != nullptr && std::fclose(idx) != 0) written = false;
  if (!written) throw InvalidArgument("\"" + index + "\": cannot write the index: " + std::strerror(errno));
  std::filesystem::rename(Temporary(path_), path_);
  std::filesystem::rename(Temporary(index), index);
}

}  // namespace conveyor::ops
