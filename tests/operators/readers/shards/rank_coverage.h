// The coverage rule of tests/distributed/torchrun_check.py (check_coverage) as gtest expectations,
// for the shard readers' one-pipeline-per-rank tests: what torchrun checks on the GPU machine,
// checked here on the CPU without torch.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace conveyor::testing {

// seen[rank][epoch]: the labels rank `rank` read in epoch `epoch`, in order. Expects of every
// epoch: a rank's repeats are only its padding (copies of its last real sample, at the end); every
// label of `all` is read by exactly one rank, and nothing else is read. `what` names the case.
template <typename Label>
void ExpectRanksCoverEveryEpoch(const std::vector<std::vector<std::vector<Label>>>& seen, const std::set<Label>& all,
                                const std::string& what) {
  const size_t epochs = seen.empty() ? 0 : seen[0].size();
  for (size_t e = 0; e < epochs; ++e) {
    std::map<Label, int> owners;  // label -> ranks that read it this epoch
    for (size_t rank = 0; rank < seen.size(); ++rank) {
      ASSERT_EQ(seen[rank].size(), epochs) << what << ": rank " << rank;
      const std::vector<Label>& labels = seen[rank][e];
      std::set<Label> distinct;
      size_t real = 0;  // samples before the padding starts
      while (real < labels.size() && distinct.insert(labels[real]).second) ++real;
      for (size_t i = real; i < labels.size(); ++i) {
        EXPECT_EQ(labels[i], labels[real - 1]) << what << " epoch " << e << " rank " << rank << " position " << i
                                               << ": a repeat other than padding with the rank's last sample";
      }
      for (const Label& label : distinct) ++owners[label];
    }
    std::set<Label> union_of_ranks;
    for (const auto& [label, ranks] : owners) {
      union_of_ranks.insert(label);
      EXPECT_EQ(ranks, 1) << what << " epoch " << e << ": sample " << label << " read by " << ranks << " ranks";
    }
    EXPECT_EQ(union_of_ranks, all) << what << " epoch " << e << ": the ranks together read every sample, nothing else";
  }
}

}  // namespace conveyor::testing
