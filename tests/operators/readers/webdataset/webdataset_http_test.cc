// readers.webdataset over HTTP (the fetch layer, against the loopback test server): shards given as
// URLs with brace ranges, scanned remotely or indexed by index files that are URLs too, deliver the
// same samples in the same order as the local shards in both shuffle modes, with sources naming
// the URL; a missing shard is an error naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/op/harness.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"
#include "tests/operators/readers/io/test_http_server.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

std::vector<uint8_t> Bytes(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_sample(i));
  return {p, p + t.shape(i).num_elements()};
}

OpSpec Reader(const Strings& paths, const Strings& index_paths, const std::string& mode) {
  OpSpec spec("readers.webdataset", "r");
  spec.SetArg("paths", paths).SetArg("ext", Strings{"jpg", "cls"}).AddOutput("jpg").AddOutput("cls");
  if (!index_paths.empty()) spec.SetArg("index_paths", index_paths);
  spec.SetArg("random_shuffle", true).SetArg("shuffle", mode).SetArg("initial_fill", int64_t{8});
  return spec;
}

TEST(WebDatasetHttp, UrlShardsGiveTheLocalSamplesInBothModes) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("wds_http");
  for (int s = 0; s < 3; ++s) {
    const std::string path = dir + "/shard-" + std::to_string(s) + ".tar";
    testing::MakeWdsShard(path, 9 + 4 * s, {"jpg", "cls"}, rng, "s" + std::to_string(s), 20000);
    std::ofstream(path + ".idx") << ops::FormatWdsIndex(ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(path))), path);
  }
  const auto server = ops::testing::TestHttpServer::Start(dir);
  const std::string url = server->Url("shard-{0..2}.tar");
  for (const std::string mode : {"samples", "shards"}) {
    for (bool indexed : {false, true}) {
      OpHarness local(Reader({dir + "/shard-{0..2}.tar"}, {}, mode), Device::kCpu, 5);
      OpHarness remote(Reader({url}, indexed ? Strings{url + ".idx"} : Strings{}, mode), Device::kCpu, 5);
      for (int it = 0; it < 9; ++it) {  // 39 samples: more than an epoch
        local.Run();
        remote.Run();
        for (int i = 0; i < 5; ++i) {
          ASSERT_EQ(Bytes(remote.OutputCpu(0), i), Bytes(local.OutputCpu(0), i)) << mode << " " << indexed << " " << it;
          ASSERT_EQ(Bytes(remote.OutputCpu(1), i), Bytes(local.OutputCpu(1), i));
          EXPECT_THAT(remote.OutputCpu(0).source(i)->file, HasSubstr(server->Url("shard-")));
        }
      }
    }
  }
  try {
    OpHarness h(Reader({server->Url("gone.tar")}, {}, "samples"), Device::kCpu, 5);
    ADD_FAILURE() << "a missing shard";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("(r): shard \"" + server->Url("gone.tar") + "\""));
  }
}

}  // namespace
}  // namespace conveyor
