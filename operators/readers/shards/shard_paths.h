// ExpandShardPaths: the shard list a reader's `paths` argument names — each entry a file, a glob,
// or an http(s) URL, with WebDataset's brace notation expanded first:
//
// | entry                              | gives                                                    |
// |------------------------------------|----------------------------------------------------------|
// | data/shard-{000000..000099}.tar    | 100 paths, numbers zero-padded to the first bound's width |
// | data/{train,val}-{0..2}.tar        | 6 paths (lists and ranges, several groups)               |
// | data/*.tar                         | the local files matching it, sorted (glob(3)); none: error|
// | https://host/s-{0..9}.tar          | 10 URLs (braces only: a URL is never globbed)            |
// | data/shard.tar                     | itself (a missing file is reported when it is opened)    |
//
// Entries keep their order; each entry's expansion is in brace order (globs sorted). Errors
// (InvalidArgument, prefixed with `where` and the argument name): unbalanced braces, a range of
// non-numbers or running backwards, more than kMaxShardPaths paths, a glob matching nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::ops {

constexpr int64_t kMaxShardPaths = 10'000'000;

std::vector<std::string> ExpandShardPaths(const std::vector<std::string>& entries, const std::string& arg,
                                          const std::string& where);

// One entry's brace expansion (no globbing); `error` prefixes messages.
std::vector<std::string> ExpandBraces(const std::string& entry, const std::string& error);

}  // namespace conveyor::ops
