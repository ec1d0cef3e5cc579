// WebDataset's sample rule and DALI's index file format (wds2idx), for readers.webdataset and
// `conveyor shards --index`.
//
// Samples: a member's key is its path up to the first dot of its basename, its extension the rest
// ("a/b/0001.seg.png" → key "a/b/0001", ext "seg.png"); consecutive members with the same key form
// one sample (WebDataset's rule). Members whose basename starts with a dot are left out (DALI's).
//
// Index files (DALI's format, version v1.2 written, v1.1 and v1.2 read):
//
//   v1.2 <number of samples>
//   <ext> <data offset> <size> <member name> [<ext> <offset> <size> <name> ...]   one line per sample
//
// v1.1 lines lack the member name (the key is then "#<line>"). Offsets are where each member's
// data begins, a multiple of 512. The format separates fields by whitespace, so a member name
// with a blank cannot be indexed (FormatWdsIndex says so). A member without an extension is written
// with ext "-".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operators/readers/shards/shard_index.h"
#include "operators/readers/webdataset/tar_scan.h"

namespace conveyor::ops {

struct MemberName {
  std::string key;
  std::string ext;
};
// nullopt for a hidden member (basename starting with '.').
std::optional<MemberName> SplitMemberName(const std::string& name);

// WebDataset's grouping of a shard's members into samples (line 0: scanned).
std::vector<ShardSample> GroupMembers(const std::vector<TarMember>& members);

// The v1.2 index text of `samples`. Throws InvalidArgument naming `shard` and the member when a
// member name holds whitespace.
std::string FormatWdsIndex(const std::vector<ShardSample>& samples, const std::string& shard);

// Parses an index file's text; `index_path` names it in messages ("index \"x.idx\" line 3: ...").
// Offsets and sizes are checked against the shard when it is first opened (ShardCache).
std::vector<ShardSample> ParseWdsIndex(const std::string& text, const std::string& index_path);

}  // namespace conveyor::ops
