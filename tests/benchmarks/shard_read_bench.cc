// Shard reading from the page cache, below the executor: how fast ScanTar indexes a shard
// (members/s, MB/s of shard), and what the order of the reads costs — every sample of 8 shards
// (10,000 samples of ~40 KB: JPEG-sized, exponential sizes) read with ByteSource::ReadAt on one
// thread in the order of each mode: sequential (shards and samples in order), shuffle: shards
// (shard order permuted, buffer of 1,024) and shuffle: samples (the exact permutation: every read
// jumps). The shards are written by libarchive's tar writer into $TMPDIR and read once first.
// CONVEYOR_DROP_CACHES=1 (root) drops the page cache before each timed epoch and scan: reads then
// come from the disk, as a data set larger than memory's would.
#include <archive.h>
#include <archive_entry.h>
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_order.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"

namespace conveyor::ops {
namespace {

constexpr int kShards = 8;
constexpr int kSamplesPerShard = 1250;

void WriteShard(const std::string& path, std::mt19937& rng) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open_filename(a, path.c_str());
  std::exponential_distribution<double> size(1.0 / 40000);
  std::vector<char> data;
  for (int i = 0; i < kSamplesPerShard; ++i) {
    for (const char* ext : {"jpg", "cls"}) {
      data.resize(ext[0] == 'j' ? static_cast<size_t>(1000 + size(rng)) : 4);
      for (char& c : data) c = static_cast<char>(rng());
      struct archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, (std::to_string(1000000 + i) + "." + ext).c_str());
      archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0644);
      archive_write_header(a, e);
      archive_write_data(a, data.data(), data.size());
      archive_entry_free(e);
    }
  }
  archive_write_close(a);
  archive_write_free(a);
}

struct Data {
  std::vector<std::unique_ptr<ByteSource>> shards;
  std::vector<std::vector<ShardSample>> samples;
  std::vector<int64_t> sizes;
  int64_t bytes = 0;
};

const Data& Shards() {
  static const Data data = [] {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = std::string(tmp ? tmp : "/tmp") + "/conveyor_shard_bench";
    std::filesystem::create_directories(dir);
    std::mt19937 rng(1);
    Data d;
    for (int s = 0; s < kShards; ++s) {
      const std::string path = dir + "/train-" + std::to_string(s) + ".tar";
      if (!std::filesystem::exists(path)) WriteShard(path, rng);
      d.shards.push_back(OpenByteSource(path));
      d.samples.push_back(GroupMembers(ScanTar(*d.shards.back())));
      d.sizes.push_back(static_cast<int64_t>(d.samples.back().size()));
      d.bytes += d.shards.back()->Size();
    }
    return d;
  }();
  return data;
}

// Empties the page cache when CONVEYOR_DROP_CACHES=1 (outside the timed part).
void MaybeDropCaches(benchmark::State& state) {
  static const bool drop = [] {
    const char* v = std::getenv("CONVEYOR_DROP_CACHES");
    return v != nullptr && std::string(v) == "1";
  }();
  if (!drop) return;
  state.PauseTiming();
  ::sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "1\n";
  state.ResumeTiming();
}

void BM_ScanTar(benchmark::State& state) {
  const Data& d = Shards();
  int64_t members = 0;
  for (auto _ : state) {
    MaybeDropCaches(state);
    for (const auto& shard : d.shards) members += static_cast<int64_t>(ScanTar(*shard).size());
  }
  state.counters["members/s"] = benchmark::Counter(static_cast<double>(members), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(state.iterations() * d.bytes);
}

// range(0): 0 sequential, 1 shuffle: shards, 2 shuffle: samples.
void BM_ReadEpoch(benchmark::State& state) {
  const Data& d = Shards();
  ShardOrderOptions o;
  o.mode = state.range(0) == 2 ? ShuffleMode::kSamples : ShuffleMode::kShards;
  o.reader.random_shuffle = state.range(0) != 0;
  o.reader.seed = 5;
  ShardOrder order(d.sizes, o, "bench");
  std::vector<std::pair<int64_t, int64_t>> at;  // (shard, sample) per global index
  for (int64_t s = 0; s < kShards; ++s) {
    for (int64_t i = 0; i < d.sizes[static_cast<size_t>(s)]; ++i) at.emplace_back(s, i);
  }
  std::vector<char> buffer(4 << 20);
  int64_t bytes = 0, samples = 0, epoch = 0;
  for (auto _ : state) {
    MaybeDropCaches(state);
    for (int64_t g : order.EpochSamples(epoch++)) {
      const auto [s, i] = at[static_cast<size_t>(g)];
      for (const ShardComponent& c : d.samples[static_cast<size_t>(s)][static_cast<size_t>(i)].components) {
        d.shards[static_cast<size_t>(s)]->ReadAt(c.offset, buffer.data(), c.size);
        bytes += c.size;
      }
      ++samples;
    }
  }
  state.SetBytesProcessed(bytes);
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
  state.SetLabel(state.range(0) == 0 ? "sequential" : state.range(0) == 1 ? "shuffle: shards" : "shuffle: samples");
}

BENCHMARK(BM_ScanTar)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadEpoch)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace conveyor::ops

BENCHMARK_MAIN();
