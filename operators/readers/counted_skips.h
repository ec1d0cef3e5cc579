// The skips each recent Setup of a reader counted, tagged with where in its stream that Setup
// started, so that a rewind (Operator::RewindIteration) un-counts exactly the Setups it undoes.
// With the CPU stage on its own thread (docs/executor.md) a reader may have run the Setups of
// several iterations past the one being redone: a rewind to state S undoes every Setup that
// started at S or later. Not thread-safe: the reader's skip mutex guards it.
#pragma once

#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

#include "operators/readers/reader_core.h"

namespace conveyor::ops {

class CountedSkips {
 public:
  // A Setup starting at `at` (the reader's state before it drew its batch).
  void BeginSetup(const ReaderState& at) {
    lists_.emplace_back(at, std::vector<size_t>{});
    if (lists_.size() > kKeep) lists_.pop_front();
  }
  // The current Setup counted one more skip, of entry `position` of the reader's skipped list.
  void Add(size_t position) {
    if (!lists_.empty()) lists_.back().second.push_back(position);
  }
  // Removes the lists of the Setups that started at `to` or later; returns their entries.
  std::vector<size_t> TakeSince(const ReaderState& to) {
    std::vector<size_t> taken;
    while (!lists_.empty() && !Before(lists_.back().first, to)) {
      const std::vector<size_t>& list = lists_.back().second;
      taken.insert(taken.end(), list.begin(), list.end());
      lists_.pop_back();
    }
    return taken;
  }

 private:
  static bool Before(const ReaderState& a, const ReaderState& b) {
    return a.epoch != b.epoch ? a.epoch < b.epoch : a.position < b.position;
  }
  // Rewinds go back at most prefetch_depth iterations; the executor caps none, so keep plenty.
  static constexpr size_t kKeep = 256;
  std::deque<std::pair<ReaderState, std::vector<size_t>>> lists_;  // oldest first
};

}  // namespace conveyor::ops
