#include "operators/readers/webdataset/tar_scan.h"

#include <archive.h>
#include <archive_entry.h>

#include <cerrno>
#include <memory>

#include "core/error.h"

namespace conveyor::ops {
namespace {

// Header reads come in blocks of this size: a header and the start of a small member's data
// in one read; larger members are skipped, not read.
constexpr int64_t kScanBlock = 16 << 10;
constexpr int64_t kTarBlock = 512;

struct Cursor {
  const ByteSource* source;
  int64_t size;
  int64_t position = 0;
  std::vector<char> block;
  std::string failure;  // the ByteSource's message when a read failed
};

la_ssize_t ReadBlock(struct archive* a, void* data, const void** out) {
  auto* c = static_cast<Cursor*>(data);
  const int64_t n = std::min<int64_t>(kScanBlock, c->size - c->position);
  if (n <= 0) return 0;
  try {
    c->source->ReadAt(c->position, c->block.data(), n);
  } catch (const std::exception& e) {
    c->failure = e.what();
    archive_set_error(a, EIO, "read failed");
    return -1;
  }
  c->position += n;
  *out = c->block.data();
  return static_cast<la_ssize_t>(n);
}

la_int64_t SkipBytes(struct archive*, void* data, la_int64_t request) {
  auto* c = static_cast<Cursor*>(data);
  const int64_t n = std::max<int64_t>(0, std::min<int64_t>(request, c->size - c->position));
  c->position += n;
  return n;
}

struct ArchiveFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

}  // namespace

std::vector<TarMember> ScanTar(const ByteSource& source) {
  const std::string where = "shard \"" + source.name() + "\"";
  Cursor cursor{&source, source.Size(), 0, {}, {}};
  cursor.block.resize(static_cast<size_t>(kScanBlock));
  std::unique_ptr<struct archive, ArchiveFree> a(archive_read_new());
  if (!a) throw InvalidArgument(where + ": libarchive could not start (out of memory)");
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_all(a.get());  // only to recognise compression and refuse it by name
  std::vector<TarMember> members;
  const auto fail = [&](const std::string& what) -> InvalidArgument {
    const std::string after =
        members.empty() ? "" : " (after member \"" + members.back().name + "\" at offset " +
                                   std::to_string(members.back().offset) + ")";
    const std::string reason = cursor.failure.empty() ? what : cursor.failure;
    return InvalidArgument(where + ": not a readable tar: " + reason + after);
  };
  if (archive_read_open2(a.get(), &cursor, nullptr, ReadBlock, SkipBytes, nullptr) != ARCHIVE_OK) {
    throw fail(archive_error_string(a.get()) ? archive_error_string(a.get()) : "cannot open");
  }
  for (bool first = true;; first = false) {
    struct archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      throw fail(archive_error_string(a.get()) ? archive_error_string(a.get()) : "unreadable header");
    }
    if (first && archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_NONE) {
      throw InvalidArgument(where + ": a " + archive_filter_name(a.get(), 0) +
                            "-compressed tar: its members cannot be read at offsets; decompress the shard "
                            "(e.g. gunzip) or write it uncompressed");
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const char* name = archive_entry_pathname(entry);
    TarMember m{name ? name : "", archive_filter_bytes(a.get(), 0), archive_entry_size(entry)};
    if (archive_entry_sparse_count(entry) > 0) {
      throw InvalidArgument(where + ": member \"" + m.name + "\" is a sparse file: its data is not one byte range");
    }
    if (m.offset % kTarBlock != 0 || m.size < 0) {
      throw InvalidArgument(where + ": member \"" + m.name + "\": expected its data on a 512-byte block, got " +
                            std::to_string(m.size) + " bytes at offset " + std::to_string(m.offset));
    }
    if (m.offset > cursor.size || m.size > cursor.size - m.offset) {
      throw InvalidArgument(where + ": member \"" + m.name + "\": its header says " + std::to_string(m.size) +
                            " bytes at offset " + std::to_string(m.offset) + ", but the shard holds " +
                            std::to_string(cursor.size) + " bytes (truncated?)");
    }
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace conveyor::ops
