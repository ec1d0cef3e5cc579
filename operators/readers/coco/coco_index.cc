#include "operators/readers/coco/coco_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace conveyor::ops::coco {
namespace {

constexpr char kMagic[8] = {'C', 'V', 'C', 'O', 'C', 'O', 'I', 'X'};
constexpr uint32_t kByteOrder = 0x01020304;
constexpr size_t kHeaderBytes = 56;
constexpr size_t kStampWindow = 64 * 1024;

// Every array of CocoAnnotations, in the file's order (one list for writing and reading).
template <typename Data, typename Fn>
void ForEachArray(Data& d, Fn&& fn) {
  fn(d.image_ids), fn(d.image_widths), fn(d.image_heights), fn(d.name_ends), fn(d.names), fn(d.image_ann_ends);
  fn(d.category_ids);
  fn(d.ann_ids), fn(d.ann_categories), fn(d.ann_boxes), fn(d.ann_crowd), fn(d.ann_poly_ends), fn(d.poly_ends);
  fn(d.coords), fn(d.ann_rle_ends), fn(d.rle_counts);
}

size_t Padded(size_t bytes) { return (bytes + 7) / 8 * 8; }

// Reads exactly `size` bytes at `offset`; false on a short read or an error.
bool ReadAt(int fd, void* dst, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(dst) + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

uint64_t HashBytes(const void* data, size_t size, uint64_t seed) {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed ^ (static_cast<uint64_t>(size) * k1);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = std::rotl(h ^ (w * k2), 31) * k1;
  }
  uint64_t tail = 0;
  for (size_t k = 0; i + k < size; ++k) tail |= static_cast<uint64_t>(p[i + k]) << (8 * k);
  h = std::rotl(h ^ (tail * k2), 31) * k1;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

SourceStamp StampOf(const std::string& path, const std::string& where) {
  const std::string at = where + ": annotations_file \"" + path + "\": ";
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw InvalidArgument(at + "cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw InvalidArgument(at + "not a regular file");
  SourceStamp stamp;
  stamp.size = static_cast<uint64_t>(st.st_size);
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::vector<uint8_t> bytes(static_cast<size_t>(std::min<uint64_t>(stamp.size, 2 * kStampWindow)));
  const size_t head = std::min(bytes.size(), kStampWindow);
  const bool ok = ReadAt(f.fd, bytes.data(), head, 0) &&
                  ReadAt(f.fd, bytes.data() + head, bytes.size() - head, stamp.size - (bytes.size() - head));
  if (!ok) throw InvalidArgument(at + "read failed");
  stamp.hash = HashBytes(bytes.data(), bytes.size());
  return stamp;
}

void SaveCocoIndex(const std::string& index_path, const CocoAnnotations& data, const SourceStamp& source,
                   const std::string& where) {
  std::vector<uint8_t> payload;
  ForEachArray(data, [&](const auto& array) {
    const uint64_t count = array.size();
    const size_t bytes = array.size() * sizeof(array[0]);
    const size_t at = payload.size();
    payload.resize(at + 8 + Padded(bytes), 0);
    std::memcpy(payload.data() + at, &count, 8);
    if (bytes > 0) std::memcpy(payload.data() + at + 8, array.data(), bytes);
  });
  uint8_t header[kHeaderBytes] = {};
  const uint64_t payload_bytes = payload.size(), payload_hash = HashBytes(payload.data(), payload.size());
  std::memcpy(header, kMagic, 8);
  std::memcpy(header + 8, &kCocoIndexVersion, 4);
  std::memcpy(header + 12, &kByteOrder, 4);
  std::memcpy(header + 16, &source.size, 8);
  std::memcpy(header + 24, &source.mtime_ns, 8);
  std::memcpy(header + 32, &source.hash, 8);
  std::memcpy(header + 40, &payload_bytes, 8);
  std::memcpy(header + 48, &payload_hash, 8);
  const std::string temp = index_path + ".tmp" + std::to_string(::getpid());
  const std::string at = where + ": preprocessed_annotations \"" + index_path + "\": ";
  std::FILE* out = std::fopen(temp.c_str(), "wb");
  if (out == nullptr) throw InvalidArgument(at + "cannot write \"" + temp + "\": " + std::strerror(errno));
  const bool written = std::fwrite(header, 1, kHeaderBytes, out) == kHeaderBytes &&
                       std::fwrite(payload.data(), 1, payload.size(), out) == payload.size();
  const bool closed = std::fclose(out) == 0;
  if (!written || !closed || std::rename(temp.c_str(), index_path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    throw InvalidArgument(at + "cannot write: " + reason);
  }
}

CocoAnnotations LoadCocoIndex(const std::string& index_path, const std::string& source_path, const SourceStamp& source,
                              const std::string& where) {
  const std::string at = where + ": preprocessed_annotations \"" + index_path + "\" (of annotations_file \"" +
                         source_path + "\"): ";
  const std::string rebuild = "; rebuild it with save_preprocessed_annotations: true";
  Fd f{::open(index_path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw InvalidArgument(at + "cannot open: " + std::strerror(errno) + rebuild);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw InvalidArgument(at + "not a regular file" + rebuild);
  const auto file_bytes = static_cast<uint64_t>(st.st_size);
  uint8_t header[kHeaderBytes];
  if (file_bytes < kHeaderBytes || !ReadAt(f.fd, header, kHeaderBytes, 0) || std::memcmp(header, kMagic, 8) != 0) {
    throw InvalidArgument(at + "not a readers.coco index (no CVCOCOIX header)" + rebuild);
  }
  uint32_t version, order;
  SourceStamp stamp;
  uint64_t payload_bytes, payload_hash;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&order, header + 12, 4);
  std::memcpy(&stamp.size, header + 16, 8);
  std::memcpy(&stamp.mtime_ns, header + 24, 8);
  std::memcpy(&stamp.hash, header + 32, 8);
  std::memcpy(&payload_bytes, header + 40, 8);
  std::memcpy(&payload_hash, header + 48, 8);
  if (version != kCocoIndexVersion) {
    throw InvalidArgument(at + "format version " + std::to_string(version) + ", this reader reads version " +
                          std::to_string(kCocoIndexVersion) + rebuild);
  }
  if (order != kByteOrder) throw InvalidArgument(at + "written on a machine of the other byte order" + rebuild);
  if (!(stamp == source)) {
    std::string what;
    if (stamp.size != source.size) {
      what = "size " + std::to_string(stamp.size) + " bytes, now " + std::to_string(source.size);
    } else if (stamp.mtime_ns != source.mtime_ns) {
      what = "modification time " + std::to_string(stamp.mtime_ns) + " ns, now " + std::to_string(source.mtime_ns);
    } else {
      what = "the same size and time but other content";
    }
    throw InvalidArgument(at + "stale: made from another version of the annotation file (" + what + ")" + rebuild);
  }
  if (payload_bytes != file_bytes - kHeaderBytes) {
    throw InvalidArgument(at + "damaged: the header promises " + std::to_string(payload_bytes) + " bytes of data, the file holds " +
                          std::to_string(file_bytes - kHeaderBytes) + rebuild);
  }
  std::vector<uint8_t> payload(static_cast<size_t>(payload_bytes));
  if (!ReadAt(f.fd, payload.data(), payload.size(), kHeaderBytes)) throw InvalidArgument(at + "read failed" + rebuild);
  if (HashBytes(payload.data(), payload.size()) != payload_hash) {
    throw InvalidArgument(at + "damaged: the data does not match its hash" + rebuild);
  }
  CocoAnnotations data;
  size_t pos = 0;
  int array = 0;
  ForEachArray(data, [&](auto& out) {
    uint64_t count = 0;
    if (payload.size() - pos < 8) throw InvalidArgument(at + "damaged: array " + std::to_string(array) + " is cut off" + rebuild);
    std::memcpy(&count, payload.data() + pos, 8);
    pos += 8;
    const uint64_t limit = (payload.size() - pos) / sizeof(out[0]);
    if (count > limit) {
      throw InvalidArgument(at + "damaged: array " + std::to_string(array) + " claims " + std::to_string(count) +
                            " elements, " + std::to_string(limit) + " fit in the rest of the file" + rebuild);
    }
    const size_t bytes = static_cast<size_t>(count) * sizeof(out[0]);
    out.resize(static_cast<size_t>(count));
    if (bytes > 0) std::memcpy(out.data(), payload.data() + pos, bytes);
    pos = std::min(payload.size(), pos + Padded(bytes));
    ++array;
  });
  if (pos != payload.size()) throw InvalidArgument(at + "damaged: " + std::to_string(payload.size() - pos) + " bytes follow the data" + rebuild);
  const std::string bad = data.Validate();
  if (!bad.empty()) throw InvalidArgument(at + "damaged: " + bad + rebuild);
  return data;
}

}  // namespace conveyor::ops::coco
