// readers.tfrecord over HTTP (the fetch layer, against the loopback test server): files given as
// URLs with a brace range, scanned remotely or indexed by index files that are URLs too, deliver
// the local records in the local order in both shuffle modes, with sources naming the URL; a
// damaged record and a missing file are errors naming the URL; http_max_retries reaches the scan,
// index files and the files opened for batches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/op/harness.h"
#include "tests/operators/readers/io/test_http_server.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Strings = std::vector<std::string>;

const Strings kFeatures = {"image/encoded: bytes", "label: int64", "bbox: float[]", "captions: bytes[]"};

OpSpec Reader(const Strings& paths, const Strings& index_paths, const std::string& mode) {
  OpSpec spec("readers.tfrecord", "r");
  spec.SetArg("path", paths).SetArg("features", kFeatures);
  for (size_t f = 0; f < kFeatures.size(); ++f) spec.AddOutput("out" + std::to_string(f));
  if (!index_paths.empty()) spec.SetArg("index_path", index_paths);
  spec.SetArg("random_shuffle", true).SetArg("shuffle", mode).SetArg("initial_fill", int64_t{8});
  return spec;
}

std::vector<uint8_t> Bytes(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_sample(i));
  return {p, p + t.shape(i).num_elements() * static_cast<int64_t>(DTypeSize(t.dtype()))};
}

TEST(TfRecordHttp, UrlFilesGiveTheLocalRecordsInBothModes) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("tfrecord_http");
  testing::MakeTfRecordDataset(dir, 3, 11, rng, 20000);  // part-0..2.tfrecord (+ .idx)
  const auto server = ops::testing::TestHttpServer::Start(dir);
  const std::string url = server->Url("part-{0..2}.tfrecord");
  for (const std::string mode : {"samples", "shards"}) {
    for (bool indexed : {false, true}) {
      OpHarness local(Reader({dir + "/part-{0..2}.tfrecord"}, {}, mode), Device::kCpu, 5);
      OpHarness remote(Reader({url}, indexed ? Strings{url + ".idx"} : Strings{}, mode), Device::kCpu, 5);
      for (int it = 0; it < 8; ++it) {  // 40 samples: more than the 33 records
        local.Run();
        remote.Run();
        for (int i = 0; i < 5; ++i) {
          for (int o = 0; o < 4; ++o) {
            ASSERT_EQ(remote.OutputCpu(o).shape(i), local.OutputCpu(o).shape(i)) << mode << " " << indexed;
            ASSERT_EQ(Bytes(remote.OutputCpu(o), i), Bytes(local.OutputCpu(o), i)) << mode << " " << indexed;
          }
          EXPECT_THAT(remote.OutputCpu(0).source(i)->file, StartsWith(server->Url("part-")));
          EXPECT_THAT(remote.OutputCpu(0).source(i)->file, HasSubstr(".tfrecord:record "));
        }
      }
    }
  }
}

TEST(TfRecordHttp, ErrorsNameTheUrl) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("tfrecord_http_errors");
  const auto files = testing::MakeTfRecordDataset(dir, 1, 6, rng, 2000);
  // Damage record 2's data: found when the record is read, the message names the URL.
  std::istringstream idx(testing::ReadText(files[0].path + ".idx"));
  int64_t offset = 0, size = 0;
  for (int r = 0; r <= 2; ++r) idx >> offset >> size;
  std::string bytes = testing::ReadText(files[0].path);
  bytes[static_cast<size_t>(offset + size - 5)] ^= 0x01;
  testing::WriteText(files[0].path, bytes);
  const auto server = ops::testing::TestHttpServer::Start(dir);
  const std::string url = server->Url("part-0.tfrecord");
  const std::string message = testing::ErrorOf([&] {
    OpHarness h(Reader({url}, {url + ".idx"}, "samples"), Device::kCpu, 6);
    h.Run();
  });
  EXPECT_THAT(message, StartsWith("op \"readers.tfrecord\" (r): \"" + url + "\": record 2 at offset " +
                                  std::to_string(offset) + ": data CRC32C 0x"));
  const std::string gone = server->Url("gone.tfrecord");
  EXPECT_THAT(testing::ErrorOf([&] { OpHarness h(Reader({gone}, {}, "samples"), Device::kCpu, 6); }),
              HasSubstr("(r): \"" + gone + "\""));
}

// Every request the reader makes stops after 1 + http_max_retries attempts, saying so: the scan
// (no index), an index file given by URL, a file opened for a batch (its index local).
TEST(TfRecordHttp, MaxRetriesReachesScansIndexFilesAndBatches) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("tfrecord_http_retries");
  testing::MakeTfRecordDataset(dir, 1, 6, rng, 2000);  // part-0.tfrecord (+ .idx)
  const auto server = ops::testing::TestHttpServer::Start(dir);
  const std::string failing = server->Url("f/fail=503:all/part-0.tfrecord");
  const auto error = [&](const std::string& path, const std::string& index, int64_t retries) {
    OpSpec spec = Reader({path}, index.empty() ? Strings{} : Strings{index}, "samples");
    spec.SetArg("http_max_retries", retries).SetArg("http_retry_backoff_ms", int64_t{1});
    server->Reset();
    try {
      OpHarness h(spec, Device::kCpu, 3);
      h.Run();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const int64_t retries : {0, 2}) {
    const std::string attempts = retries == 0 ? "HTTP 503 after 1 attempt" : "HTTP 503 after 3 attempts";
    EXPECT_THAT(error(failing, "", retries), HasSubstr("(r): \"" + failing + "\": cannot open: " + attempts));
    EXPECT_EQ(server->counts().requests, retries + 1) << server->Log();
    EXPECT_THAT(error(server->Url("part-0.tfrecord"), failing + ".idx", retries),
                HasSubstr("(r): \"" + failing + ".idx\": cannot open: " + attempts));
    EXPECT_EQ(server->counts().requests, retries + 1) << server->Log();
    EXPECT_THAT(error(failing, dir + "/part-0.tfrecord.idx", retries),
                HasSubstr("(r): shard \"" + failing + "\": cannot open: " + attempts));
    EXPECT_EQ(server->counts().requests, retries + 1) << server->Log();
  }
}

}  // namespace
}  // namespace conveyor
