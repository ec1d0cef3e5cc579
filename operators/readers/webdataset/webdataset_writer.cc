#include "operators/readers/webdataset/webdataset_writer.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"

namespace conveyor::ops {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlock = 512;

std::string Temporary(const std::string& path) { return path + ".tmp"; }

int64_t MemberBytes(int64_t size) { return kBlock + (size + kBlock - 1) / kBlock * kBlock; }

void WriteWholeFile(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(Temporary(path).c_str(), "wb");
  bool written = file != nullptr && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (file != nullptr && std::fclose(file) != 0) written = false;
  if (!written) throw InvalidArgument("\"" + path + "\": cannot write the index");
}

}  // namespace

int64_t WebDatasetWriter::SampleBytes(std::span<const int64_t> member_sizes) {
  int64_t total = 0;
  for (int64_t size : member_sizes) total += MemberBytes(size);
  return total;
}

WebDatasetWriter::WebDatasetWriter(std::string path) : path_(std::move(path)) {
  archive_ = archive_write_new();
  if (archive_ == nullptr) throw InvalidArgument("shard \"" + path_ + "\": libarchive could not start a writer");
  // ustar, uncompressed (readers read members at offsets), and no padding of the last block: the
  // shard ends right after its end marker, so its size is known ahead (header comment).
  if (archive_write_set_format_ustar(archive_) != ARCHIVE_OK || archive_write_add_filter_none(archive_) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(archive_, 1) != ARCHIVE_OK ||
      archive_write_open_filename(archive_, Temporary(path_).c_str()) != ARCHIVE_OK) {
    const std::string reason = archive_error_string(archive_) ? archive_error_string(archive_) : "unknown error";
    Discard();
    throw InvalidArgument("shard \"" + path_ + "\": cannot write: " + reason);
  }
}

WebDatasetWriter::~WebDatasetWriter() { Discard(); }

void WebDatasetWriter::Discard() {
  if (archive_ == nullptr) return;
  archive_write_free(archive_);  // also closes the file
  archive_ = nullptr;
  std::error_code ignored;
  fs::remove(Temporary(path_), ignored);
}

void WebDatasetWriter::Write(const std::string& key, const std::vector<WebDatasetMember>& members) {
  if (archive_ == nullptr) throw InvalidArgument("shard \"" + path_ + "\": written after Close()");
  const std::string base = key.substr(key.find_last_of('/') + 1);
  if (key.empty() || base.find('.') != std::string::npos ||
      std::any_of(key.begin(), key.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
    throw InvalidArgument("shard \"" + path_ + "\": sample key \"" + key +
                          "\": expected a name without dots in its basename and without whitespace");
  }
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(), archive_entry_free);
  for (const WebDatasetMember& member : members) {
    const std::string name = key + "." + member.ext;
    archive_entry_clear(entry.get());
    archive_entry_set_pathname(entry.get(), name.c_str());
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(member.data.size()));
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_mtime(entry.get(), 0, 0);
    const std::string where = "shard \"" + path_ + "\": member \"" + name + "\": ";
    if (archive_write_header(archive_, entry.get()) != ARCHIVE_OK) {
      throw InvalidArgument(where + "cannot write its header: " + archive_error_string(archive_));
    }
    if (!member.data.empty() &&
        archive_write_data(archive_, member.data.data(), member.data.size()) != static_cast<la_ssize_t>(member.data.size())) {
      const char* reason = archive_error_string(archive_);
      throw InvalidArgument(where + "write failed: " + (reason ? reason : "short write"));
    }
    offset_ += MemberBytes(static_cast<int64_t>(member.data.size()));
  }
  ++samples_;
}

void WebDatasetWriter::Close() {
  if (archive_ == nullptr) return;
  if (archive_write_close(archive_) != ARCHIVE_OK) {
    const std::string reason = archive_error_string(archive_) ? archive_error_string(archive_) : "unknown error";
    Discard();
    throw InvalidArgument("shard \"" + path_ + "\": write failed: " + reason);
  }
  archive_write_free(archive_);
  archive_ = nullptr;
  const std::string tmp = Temporary(path_);
  try {
    std::error_code ec;
    const int64_t size = static_cast<int64_t>(fs::file_size(tmp, ec));
    if (ec || size != bytes()) {
      throw InvalidArgument("shard \"" + path_ + "\": expected " + std::to_string(bytes()) + " bytes written, found " +
                            (ec ? ec.message() : std::to_string(size)));
    }
    // The index of the shard as written, by the code `conveyor index webdataset` runs; it names
    // the shard as it will be called.
    const std::unique_ptr<ByteSource> source = OpenByteSource(tmp);
    const std::string index = path_ + ".idx";
    WriteWholeFile(index, FormatWdsIndex(GroupMembers(ScanTar(*source)), path_));
    fs::rename(tmp, path_);
    fs::rename(Temporary(index), index);
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fs::remove(Temporary(path_ + ".idx"), ignored);
    throw;
  }
}

}  // namespace conveyor::ops
