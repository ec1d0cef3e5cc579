#include "cli/npy_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "operators/readers/npy_format.h"

namespace conveyor::cli {
namespace {

void WriteFile(const std::string& path, const std::string& header, const std::vector<std::pair<const char*, size_t>>& parts) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw InvalidArgument("cannot write \"" + path + "\": " + std::strerror(errno));
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const auto& [data, size] : parts) f.write(data, static_cast<std::streamsize>(size));
  if (!f.flush()) throw InvalidArgument("cannot write \"" + path + "\": " + std::strerror(errno));
}

std::string Name(const std::string& dir, const std::string& output, int64_t iteration, int sample) {
  char buf[64];
  if (sample < 0) std::snprintf(buf, sizeof(buf), "_%06lld.npy", static_cast<long long>(iteration));
  else std::snprintf(buf, sizeof(buf), "_%06lld_%04d.npy", static_cast<long long>(iteration), sample);
  return (std::filesystem::path(dir) / (output + buf)).string();
}

}  // namespace

void MakeDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw InvalidArgument("--save-outputs: cannot create the folder \"" + dir + "\": " +
                          (ec ? ec.message() : std::string("a file of that name exists")));
  }
}

std::vector<std::string> SaveBatchNpy(const std::string& dir, const std::string& output, int64_t iteration,
                                      const TensorListCPU& batch) {
  std::vector<std::string> written;
  const size_t elem = DTypeSize(batch.dtype());
  auto sample_bytes = [&](int i) {
    return std::make_pair(static_cast<const char*>(batch.raw_sample(i)),
                          static_cast<size_t>(batch.shape(i).num_elements()) * elem);
  };
  if (batch.num_samples() > 0 && batch.is_uniform()) {
    std::vector<int64_t> dims = {batch.num_samples()};
    for (int64_t d : batch.shape(0)) dims.push_back(d);
    std::vector<std::pair<const char*, size_t>> parts;
    for (int i = 0; i < batch.num_samples(); ++i) parts.push_back(sample_bytes(i));
    const std::string path = Name(dir, output, iteration, -1);
    WriteFile(path, ops::MakeNpyHeader(batch.dtype(), Shape(dims), false), parts);
    written.push_back(path);
    return written;
  }
  for (int i = 0; i < batch.num_samples(); ++i) {
    const std::string path = Name(dir, output, iteration, i);
    WriteFile(path, ops::MakeNpyHeader(batch.dtype(), batch.shape(i), false), {sample_bytes(i)});
    written.push_back(path);
  }
  return written;
}

}  // namespace conveyor::cli
