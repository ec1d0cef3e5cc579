// --feed: what the CLI hands an external_source node each iteration, since no application does.
//
//   --feed NODE=SHAPE        SHAPE = D0xD1x...; each D is N or LO-HI (drawn per sample)
//   --feed images=200-480x200-640x3   → HWC samples of random height and width, 3 channels
//
// | node's dtype argument | values (uniform, from a counter-based generator)   |
// |-----------------------|-----------------------------------------------------|
// | uint8, int*, uint16   | 0..255 (clipped to the type's range)               |
// | bool                  | 0 or 1                                              |
// | float16/32/64, bf16   | [0, 1)                                              |
// The batch carries the node's `layout` argument; the sample rank must equal its `ndim` (when not
// -1). Batches are a pure function of (pipeline seed, node name, iteration): runs repeat exactly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/op/spec.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::cli {

struct FeedSpec {
  std::string node;
  std::vector<std::pair<int64_t, int64_t>> dims;  // [lo, hi] per dimension (lo == hi: fixed)
  std::string text;                               // as given, for messages
};

// Throws InvalidArgument: `--feed TEXT: expected NODE=SHAPE ...`.
FeedSpec ParseFeed(const std::string& text);

// Checks `feed` against the external_source node `node` (rank vs ndim); InvalidArgument naming
// the node (with its file position) otherwise.
void CheckFeed(const FeedSpec& feed, const OpSpec& node);

// One batch of `batch_size` samples for iteration `iteration`.
TensorListCPU MakeFeedBatch(const FeedSpec& feed, const OpSpec& node, int batch_size, uint64_t seed,
                            int64_t iteration);

}  // namespace conveyor::cli
