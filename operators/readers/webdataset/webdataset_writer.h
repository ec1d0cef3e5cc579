// WebDatasetWriter: writes one WebDataset tar shard — each sample's members `<key>.<ext>` in order —
// with libarchive's ustar writer, and the shard's wds2idx v1.2 index beside it (PATH.idx), for
// `conveyor shards` and the sample-data tool; readers.webdataset reads both.
//
// The format is libarchive's to write (project rule: standard formats come from a library), not
// ours: we only choose ustar (every member name we write fits its 255 bytes, and ustar's layout
// lets the writer know a shard's size before writing: 512 bytes of header plus the data padded to
// 512 per member, and 1,024 bytes of end marker — nothing padded to a 10 KiB block). Members get
// mode 0644, owner 0 and mtime 0, so the same samples give byte-identical shards.
//
// The index is written by scanning the finished tar with ScanTar/GroupMembers (the code of
// `conveyor index webdataset`), so the two can't disagree. Both files are written under
// temporary names (PATH.tmp, PATH.idx.tmp) and renamed by Close(): a reader never sees half a
// shard. Errors are InvalidArgument naming the shard (and the member).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

struct archive;

namespace conveyor::ops {

struct WebDatasetMember {
  std::string ext;                 // "jpg", "cls", "seg.png" (without the leading dot)
  std::span<const uint8_t> data;
};

class WebDatasetWriter {
 public:
  explicit WebDatasetWriter(std::string path);
  ~WebDatasetWriter();  // without Close(): the temporary files are removed
  WebDatasetWriter(const WebDatasetWriter&) = delete;  // one open archive, one owner
  WebDatasetWriter& operator=(const WebDatasetWriter&) = delete;

  // Appends one sample: a member `<key>.<ext>` per entry, in order. A key holds no dot in its
  // basename (WebDataset splits the name at the first one) and no whitespace (the index can't).
  void Write(const std::string& key, const std::vector<WebDatasetMember>& members);
  // Ends the archive, writes the index and moves both files to their names.
  void Close();

  // The bytes the shard holds after the samples so far, once closed (end marker included).
  int64_t bytes() const { return offset_ + kEndBytes; }
  int64_t samples() const { return samples_; }
  // The bytes a sample of members of these sizes adds to a shard.
  static int64_t SampleBytes(std::span<const int64_t> member_sizes);

  static constexpr int64_t kEndBytes = 1024;  // two zero blocks end a tar

 private:
  void Discard();

  std::string path_;
  archive* archive_ = nullptr;
  int64_t offset_ = 0;  // bytes of the members written so far
  int64_t samples_ = 0;
};

}  // namespace conveyor::ops
