// ScanTar: the members of a tar shard — name, where its data starts, its size — read from the
// headers only, through a ByteSource (so a URL is scanned with ranged reads), with libarchive.
//
// Parsing a standard format is a library's job (project rule): libarchive reads ustar, pax
// (long names, large sizes) and GNU tar headers; we only ask it for each header and where the
// member's data begins, and skip the data (its skip callback moves our offset without reading).
// Every offset is checked before it is believed: the data must start on a 512-byte block and end
// inside the shard.
//
// | input                                   | result                                              |
// |-----------------------------------------|-----------------------------------------------------|
// | regular members                         | listed in archive order                             |
// | directories, links, devices, pax globals| left out                                            |
// | compressed tar (gzip, bzip2, xz, zstd)  | InvalidArgument: members cannot be read at offsets  |
// | sparse members                          | InvalidArgument (their data is not one byte range)  |
// | a header whose size runs past the end   | InvalidArgument naming member, offset, both sizes   |
// | a cut or corrupt header, not a tar      | InvalidArgument with libarchive's reason            |
//
// Messages start with `shard "<name>": `.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {

struct TarMember {
  std::string name;     // the path stored in the archive
  int64_t offset = 0;   // first byte of its data in the shard
  int64_t size = 0;
  friend bool operator==(const TarMember&, const TarMember&) = default;
};

std::vector<TarMember> ScanTar(const ByteSource& source);

}  // namespace conveyor::ops
