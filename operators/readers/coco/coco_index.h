// The preprocessed-annotations file: CocoAnnotations in binary, so that a large annotation file is
// parsed once (readers.coco's save_preprocessed_annotations) and loaded afterwards
// (preprocessed_annotations).
//
//   offset  field
//   0       magic "CVCOCOIX" (8 bytes)
//   8       u32 format version (kCocoIndexVersion), u32 0x01020304 (byte order of the writer)
//   16      the source stamp: u64 size, i64 mtime (ns since the epoch), u64 hash of its first and
//           last 64 KiB
//   40      u64 payload bytes, u64 payload hash
//   56      payload: each array of CocoAnnotations in declaration order, as u64 element count then
//           the elements' bytes, zero-padded to a multiple of 8
//
// Loading checks, in order: magic, version, byte order, that the stamp equals the annotation
// file's now (else the index is stale: the message says which of size, mtime and content
// differs), the payload's size and hash (else damaged), each array's count against the bytes
// left (before allocating), and CocoAnnotations::Validate. Every failure is an InvalidArgument
// naming the index and the annotation file, and saying how to rebuild it.
#pragma once

#include <cstdint>
#include <string>

#include "operators/readers/coco/coco_annotations.h"

namespace conveyor::ops::coco {

inline constexpr uint32_t kCocoIndexVersion = 1;

// What identifies one version of an annotation file.
struct SourceStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t hash = 0;  // of the first and last 64 KiB (all of a file up to 128 KiB)
  friend bool operator==(const SourceStamp&, const SourceStamp&) = default;
};

// Throws InvalidArgument (prefixed with `where`) when the file cannot be read.
SourceStamp StampOf(const std::string& path, const std::string& where);

// Writes atomically (a temporary file beside it, then rename). Throws InvalidArgument naming the
// index on a write failure.
void SaveCocoIndex(const std::string& index_path, const CocoAnnotations& data, const SourceStamp& source,
                   const std::string& where);

// Throws InvalidArgument as described above; `source_path` only names the annotation file.
CocoAnnotations LoadCocoIndex(const std::string& index_path, const std::string& source_path, const SourceStamp& source,
                              const std::string& where);

// The 64-bit hash both the stamp and the payload use (word-wise multiply-xor; not cryptographic).
uint64_t HashBytes(const void* data, size_t size, uint64_t seed = 0);

}  // namespace conveyor::ops::coco
