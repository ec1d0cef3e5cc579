// libFuzzer target: readers.webdataset's shard layer on untrusted bytes — the tar header scan
// (libarchive through a ByteSource), WebDataset's grouping of members into samples, the wds2idx
// index writer and parser. The first byte picks what the rest is:
//   0: a tar shard: scanned, every member checked (data on a 512-byte block, inside the shard),
//      grouped, its index written and parsed back (the same samples, offsets and sizes)
//   1: index text: parsed; every component a non-negative offset and size
// Contract: a conveyor::Error or success; no crash, no other exception, no UB.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/readers/io/memory_source.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"

namespace {

using namespace conveyor::ops;  // NOLINT: a fuzz target's one translation unit

void ScanShard(const uint8_t* data, size_t size) {
  const MemorySource source(data, size, "fuzz.tar");
  const std::vector<TarMember> members = ScanTar(source);
  for (const TarMember& m : members) {
    // ScanTar's promise: data on a block boundary, inside the shard.
    if (m.offset < 0 || m.size < 0 || m.offset % 512 != 0 || m.offset > source.Size() ||
        m.size > source.Size() - m.offset) {
      __builtin_trap();
    }
  }
  const std::vector<ShardSample> samples = GroupMembers(members);
  std::string text;
  try {
    text = FormatWdsIndex(samples, "fuzz.tar");
  } catch (const conveyor::Error&) {
    return;  // a member name the format cannot hold (whitespace): refused by name
  }
  // The index round-trips where it must: the same samples, components, offsets and sizes.
  const std::vector<ShardSample> parsed = ParseWdsIndex(text, "fuzz.tar.idx");
  if (parsed.size() != samples.size()) __builtin_trap();
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (parsed[i].components.size() != samples[i].components.size()) __builtin_trap();
    for (size_t k = 0; k < parsed[i].components.size(); ++k) {
      if (parsed[i].components[k].offset != samples[i].components[k].offset ||
          parsed[i].components[k].size != samples[i].components[k].size) {
        __builtin_trap();
      }
    }
  }
}

void ParseIndex(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const ShardSample& s : ParseWdsIndex(text, "fuzz.idx")) {
    for (const ShardComponent& c : s.components) {
      if (c.offset < 0 || c.size < 0) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (4 << 20)) return 0;
  try {
    if (data[0] % 2 == 0) {
      ScanShard(data + 1, size - 1);
    } else {
      ParseIndex(data + 1, size - 1);
    }
  } catch (const conveyor::Error&) {
    // Refused with a message: the contract.
  }
  return 0;
}
