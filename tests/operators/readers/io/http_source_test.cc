// HttpSource against a loopback server: sizes, byte-identical reads (random, concurrent,
// sequential), what the read-ahead fetches and holds, and servers without (full) range support.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "tests/operators/readers/io/http_fixture.h"

namespace conveyor::ops::testing {
namespace {

using ::testing::HasSubstr;

// Reads through `source` into a poisoned buffer and compares with `expected` (the whole file).
::testing::AssertionResult ReadsIdentical(const ByteSource& source, const std::vector<uint8_t>& expected,
                                          int64_t offset, int64_t bytes) {
  std::vector<uint8_t> out(static_cast<size_t>(bytes), 0xA5);
  source.ReadAt(offset, out.data(), bytes);
  if (std::equal(out.begin(), out.end(), expected.begin() + offset)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "bytes differ in [" << offset << ", " << offset + bytes << ")";
}

TEST_F(HttpTest, SizeComesFromOneProbeRequest) {
  const std::vector<size_t> sizes = {0, 1, 4097, size_t{3} << 20};
  for (size_t size : sizes) {
    const std::string name = "size_" + std::to_string(size) + ".bin";
    AddFile(name, size);
    const std::unique_ptr<ByteSource> source = OpenByteSource(server_->Url(name), Fast());
    EXPECT_EQ(source->Size(), static_cast<int64_t>(size)) << name;
    EXPECT_EQ(source->name(), server_->Url(name));
  }
  EXPECT_EQ(server_->counts().requests, static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(server_->counts().bytes, 3);  // the probe's one byte of each non-empty file
}

TEST_F(HttpTest, RandomReadsFetchExactlyTheBytesAsked) {
  // Each read sits in its own 512 KiB slot, far from the others: no run forms, nothing is read ahead.
  constexpr int64_t kSlot = 512 << 10;
  constexpr int kSlots = 32;
  const std::vector<uint8_t> bytes = AddFile("random.bin", kSlot * kSlots);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 1 << 20;  // blocks of 128 KiB
  const std::unique_ptr<HttpSource> source = Open("random.bin", options);
  std::mt19937 rng(std::random_device{}());
  std::vector<int> order(kSlots);
  for (int i = 0; i < kSlots; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  int64_t asked = 0;
  for (int slot : order) {
    const int64_t size = std::uniform_int_distribution<int64_t>(1, 64 << 10)(rng);
    const int64_t offset = slot * kSlot + std::uniform_int_distribution<int64_t>(0, kSlot / 4)(rng);
    EXPECT_TRUE(ReadsIdentical(*source, bytes, offset, size));
    asked += size;
  }
  EXPECT_EQ(server_->counts().requests, kSlots + 1);
  EXPECT_EQ(server_->counts().bytes, asked + 1);  // + the probe's byte: no alignment, no read-ahead
  EXPECT_EQ(source->stats().sequential_reads, 0);
  EXPECT_EQ(source->stats().peak_held_bytes, 0);
}

TEST_F(HttpTest, ReadsOutsideTheSourceAreRejected) {
  AddFile("bounds.bin", 4096);
  const std::unique_ptr<HttpSource> source = Open("bounds.bin");
  const std::string url = server_->Url("bounds.bin");
  std::vector<uint8_t> out(64);
  EXPECT_EQ(ErrorOf([&] { source->ReadAt(4090, out.data(), 7); }),
            "\"" + url + "\": expected 7 bytes at offset 4090, the source holds 4096");
  EXPECT_THAT(ErrorOf([&] { source->ReadAt(-1, out.data(), 1); }), HasSubstr("expected 1 bytes at offset -1"));
  EXPECT_EQ(ErrorOf([&] { source->ReadAt(4096, out.data(), 0); }), "");
  EXPECT_EQ(server_->counts().requests, 1);  // refused before any request
}

TEST_F(HttpTest, ConcurrentReadsFromManyThreadsAreByteIdentical) {
  constexpr int64_t kSize = 8 << 20;
  const std::vector<uint8_t> bytes = AddFile("concurrent.bin", kSize);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 2 << 20;
  options.memory_limit_bytes = 2 << 20;  // scans evict each other's blocks
  options.max_connections = 3;           // readers wait for connections
  const std::unique_ptr<HttpSource> source = Open("concurrent.bin", options);
  std::atomic<int> mismatches{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(std::random_device{}() + t);
      try {
        if (t < 4) {  // random reads
          for (int i = 0; i < 60; ++i) {
            const int64_t size = std::uniform_int_distribution<int64_t>(1, 100 << 10)(rng);
            const int64_t offset = std::uniform_int_distribution<int64_t>(0, kSize - size)(rng);
            if (!ReadsIdentical(*source, bytes, offset, size)) ++mismatches;
          }
        } else {  // a sequential scan of one quarter
          const int64_t begin = (t - 4) * (kSize / 4);
          for (int64_t offset = begin; offset < begin + kSize / 4; offset += 16 << 10) {
            if (!ReadsIdentical(*source, bytes, offset, 16 << 10)) ++mismatches;
          }
        }
      } catch (const std::exception& error) {
        ADD_FAILURE() << error.what();
        ++errors;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(source->stats().sequential_reads, 0);
  EXPECT_LE(source->stats().peak_held_bytes, options.memory_limit_bytes);
}

TEST_F(HttpTest, SequentialTarScanIsReadAheadInBlocks) {
  // A tar-like layout: 512-byte headers, bodies padded to 512 bytes; a scan reads each header and
  // body front to back, as a reader without an index does.
  std::mt19937 rng(std::random_device{}());
  std::vector<std::pair<int64_t, int64_t>> reads;  // (offset, bytes)
  int64_t end = 0;
  while (end < (4 << 20)) {
    const int64_t body = std::uniform_int_distribution<int64_t>(100, 30000)(rng);
    reads.emplace_back(end, 512);
    reads.emplace_back(end + 512, body);
    end += 512 + (body + 511) / 512 * 512;
  }
  const std::vector<uint8_t> bytes = AddFile("scan.tar", static_cast<size_t>(end));
  FetchOptions options = Fast();
  options.read_ahead_bytes = 1 << 20;  // blocks of 128 KiB, 8 ahead
  const std::unique_ptr<HttpSource> source = Open("scan.tar", options);
  for (const auto& [offset, size] : reads) ASSERT_TRUE(ReadsIdentical(*source, bytes, offset, size));

  const HttpSourceStats stats = source->stats();
  const int64_t blocks = (end + stats.block_bytes - 1) / stats.block_bytes;
  EXPECT_EQ(stats.block_bytes, 128 << 10);
  const TestHttpServer::Counts counts = server_->counts();
  // The probe, the two reads before the run counts as sequential, then one request per block.
  EXPECT_LE(counts.requests, 1 + 2 + blocks) << reads.size() << " reads\n" << server_->Log();
  EXPECT_LE(counts.bytes, end + 1 + 512 + 30000);  // no block twice
  EXPECT_GE(stats.read_ahead_blocks, blocks - 2);  // all but the first came from the read-ahead
  EXPECT_EQ(stats.blocks_fetched, blocks);
}

TEST_F(HttpTest, MemoryLimitIsAHardBound) {
  constexpr int64_t kSize = 16 << 20;
  const std::vector<uint8_t> bytes = AddFile("bounded.bin", kSize);
  FetchOptions options = Fast();
  options.read_ahead_bytes = 8 << 20;      // asks for far more than the limit allows
  options.memory_limit_bytes = 512 << 10;  // blocks of 256 KiB: two at a time
  const std::unique_ptr<HttpSource> source = Open("bounded.bin", options);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {  // eight sequential scans of 2 MiB each compete for two blocks
    threads.emplace_back([&, t] {
      std::mt19937 rng(std::random_device{}() + t);
      int64_t offset = t * (kSize / 8);
      while (offset < (t + 1) * (kSize / 8)) {
        const int64_t size =
            std::min<int64_t>(std::uniform_int_distribution<int64_t>(1, 64 << 10)(rng), (t + 1) * (kSize / 8) - offset);
        if (!ReadsIdentical(*source, bytes, offset, size)) ++mismatches;
        offset += size;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const HttpSourceStats stats = source->stats();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(stats.block_bytes, 256 << 10);
  EXPECT_GT(stats.peak_held_bytes, 0);  // the cache was used...
  EXPECT_LE(stats.peak_held_bytes, options.memory_limit_bytes);  // ...within the bound
  EXPECT_LE(stats.held_bytes, options.memory_limit_bytes);

  options.memory_limit_bytes = 16 << 10;  // too little for a block: no cache, reads still work
  const std::unique_ptr<HttpSource> uncached = Open("bounded.bin", options);
  for (int64_t offset = 0; offset < (1 << 20); offset += 4096) ASSERT_TRUE(ReadsIdentical(*uncached, bytes, offset, 4096));
  EXPECT_EQ(uncached->stats().block_bytes, 0);
  EXPECT_EQ(uncached->stats().peak_held_bytes, 0);
}

TEST_F(HttpTest, ServerWithoutRangesIsReadWholeWithinTheLimit) {
  const std::vector<uint8_t> small = AddFile("norange_small.bin", 100000);
  AddFile("norange_large.bin", 2 << 20);
  FetchOptions options = Fast();
  options.memory_limit_bytes = 1 << 20;
  const std::unique_ptr<HttpSource> source = Open("f/norange/norange_small.bin", options);
  EXPECT_EQ(source->Size(), 100000);
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 50; ++i) {
    const int64_t size = std::uniform_int_distribution<int64_t>(1, 5000)(rng);
    ASSERT_TRUE(ReadsIdentical(*source, small, std::uniform_int_distribution<int64_t>(0, 100000 - size)(rng), size));
  }
  EXPECT_FALSE(source->stats().ranges);
  EXPECT_EQ(source->stats().held_bytes, 100000);
  EXPECT_EQ(server_->counts().requests, 1);  // the probe brought it all

  EXPECT_EQ(ErrorOf([&] { Open("f/norange/norange_large.bin", options); }),
            "\"" + server_->Url("f/norange/norange_large.bin") +
                "\": cannot open: the server does not answer range requests (HTTP 200 to \"Range: bytes=0-0\") "
                "and the whole resource (2097152 bytes) exceeds memory_limit_bytes (1048576)");
}

TEST_F(HttpTest, ShorterRangeAnswersAreCompletedWithoutRetries) {
  const std::vector<uint8_t> bytes = AddFile("capped.bin", 50000);
  FetchOptions options = Fast();
  options.max_retries = 0;  // a short answer is no failure: it must not need a retry
  const std::unique_ptr<HttpSource> source = Open("f/cap=1000/capped.bin", options);
  EXPECT_TRUE(ReadsIdentical(*source, bytes, 123, 10000));
  EXPECT_EQ(server_->counts().requests, 1 + 10);
  EXPECT_EQ(source->stats().failed_attempts, 0);
}

}  // namespace
}  // namespace conveyor::ops::testing
