// The nvJPEG loader: search order, errors for a missing library and a wrong library, status
// messages. Needs no GPU and no nvJPEG (the build machines have neither); the last test loads
// the real library where one exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

namespace conveyor::nvjpeg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

GetEnv FakeEnv(const std::map<std::string, std::string>& vars) {
  auto owned = std::make_shared<std::map<std::string, std::string>>(vars);
  return [owned](const char* name) -> const char* {
    auto it = owned->find(name);
    return it == owned->end() ? nullptr : it->second.c_str();
  };
}

// A fresh folder under the test's temporary directory.
fs::path MakeDir(const fs::path& p) {
  fs::create_directories(p);
  return p;
}

size_t IndexOf(const std::vector<std::string>& v, const std::string& s) {
  auto it = std::find(v.begin(), v.end(), s);
  EXPECT_NE(it, v.end()) << s << " is not among the candidates";
  return static_cast<size_t>(it - v.begin());
}

TEST(NvjpegLoader, ExplicitPathIsTheOnlyCandidate) {
  EXPECT_THAT(NvjpegSearchPaths(FakeEnv({{"CONVEYOR_NVJPEG_PATH", "/opt/x/libnvjpeg.so.13"},
                                          {"VIRTUAL_ENV", "/nonexistent"}})),
              ElementsAre("/opt/x/libnvjpeg.so.13"));
}

TEST(NvjpegLoader, SearchOrderSonamesThenPipFolders) {
  const fs::path root = fs::path(::testing::TempDir()) / "nvjpeg_search_order";
  fs::remove_all(root);
  const fs::path venv_site = MakeDir(root / "venv/lib/python3.11/site-packages");
  const fs::path pythonpath = MakeDir(root / "pp");
  const fs::path home_site = MakeDir(root / "home/.local/lib/python3.12/site-packages");
  const std::vector<std::string> paths = NvjpegSearchPaths(FakeEnv({{"VIRTUAL_ENV", (root / "venv").string()},
                                                                    {"PYTHONPATH", pythonpath.string() + ":"},
                                                                    {"HOME", (root / "home").string()}}));
  ASSERT_GE(paths.size(), 8u);
  EXPECT_EQ(paths[0], "libnvjpeg.so.13");
  EXPECT_EQ(paths[1], "libnvjpeg.so");
  // Our three site folders come first among the pip candidates, in the documented order.
  EXPECT_EQ(paths[2], venv_site.string() + "/nvidia/cu13/lib/libnvjpeg.so.13");
  EXPECT_EQ(paths[3], venv_site.string() + "/nvidia/nvjpeg/lib/libnvjpeg.so.13");
  EXPECT_EQ(paths[4], pythonpath.string() + "/nvidia/cu13/lib/libnvjpeg.so.13");
  EXPECT_EQ(paths[5], pythonpath.string() + "/nvidia/nvjpeg/lib/libnvjpeg.so.13");
  EXPECT_EQ(paths[6], home_site.string() + "/nvidia/cu13/lib/libnvjpeg.so.13");
  EXPECT_EQ(paths[7], home_site.string() + "/nvidia/nvjpeg/lib/libnvjpeg.so.13");
  // System folders (where this machine has them) follow the user's.
  for (size_t i = 8; i < paths.size(); ++i) {
    EXPECT_TRUE(paths[i].rfind("/usr/", 0) == 0) << paths[i];
  }
}

TEST(NvjpegLoader, MissingFoldersAreSkippedAndDuplicatesDropped) {
  const fs::path root = fs::path(::testing::TempDir()) / "nvjpeg_search_dups";
  fs::remove_all(root);
  const fs::path site = MakeDir(root / "site");
  const std::vector<std::string> paths = NvjpegSearchPaths(
      FakeEnv({{"VIRTUAL_ENV", (root / "no_such_venv").string()},
               {"PYTHONPATH", site.string() + ":" + site.string() + ":" + (root / "missing").string()}}));
  EXPECT_EQ(IndexOf(paths, site.string() + "/nvidia/cu13/lib/libnvjpeg.so.13"), 2u);
  EXPECT_EQ(std::count(paths.begin(), paths.end(), site.string() + "/nvidia/cu13/lib/libnvjpeg.so.13"), 1);
  for (const std::string& p : paths) {
    EXPECT_EQ(p.find("no_such_venv"), std::string::npos) << p;
    EXPECT_EQ(p.find("missing"), std::string::npos) << p;
  }
}

TEST(NvjpegLoader, NoLibraryListsEveryPathTried) {
  try {
    NvjpegLibrary::Open({"/nonexistent/libnvjpeg.so.13", "/also/not/here.so"});
    FAIL() << "expected NvjpegUnavailable";
  } catch (const NvjpegUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("no library could be opened"));
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/libnvjpeg.so.13: "));
    EXPECT_THAT(e.what(), HasSubstr("/also/not/here.so: "));
  }
}

TEST(NvjpegLoader, WrongLibraryNamesTheMissingSymbolAndFile) {
  // libm opens everywhere and has none of nvJPEG's entry points.
  try {
    NvjpegLibrary::Open({"libm.so.6"});
    FAIL() << "expected NvjpegUnavailable";
  } catch (const NvjpegUnavailable& e) {
    EXPECT_THAT(e.what(), HasSubstr("symbol \"nvjpegGetProperty\" not found in \"libm.so.6\""));
  }
}

TEST(NvjpegLoader, StatusMessagesNameCallStatusAndPlace) {
  try {
    CONVEYOR_NVJPEG_CHECK(NVJPEG_STATUS_BAD_JPEG, "sample 3 (cat.jpg)");
    FAIL() << "expected NvjpegError";
  } catch (const NvjpegError& e) {
    EXPECT_EQ(e.status(), NVJPEG_STATUS_BAD_JPEG);
    EXPECT_THAT(e.what(), HasSubstr("NVJPEG_STATUS_BAD_JPEG failed: NVJPEG_STATUS_BAD_JPEG (3): sample 3 (cat.jpg)"));
  }
  EXPECT_NO_THROW(CheckNvjpeg(NVJPEG_STATUS_SUCCESS, "nvjpegX"));
  EXPECT_STREQ(StatusName(NVJPEG_STATUS_INCOMPLETE_BITSTREAM), "NVJPEG_STATUS_INCOMPLETE_BITSTREAM");
  EXPECT_STREQ(StatusName(static_cast<nvjpegStatus_t>(42)), "nvjpegStatus_t(unknown)");
}

TEST(NvjpegLoader, SharedLibraryLoadsWhereInstalled) {
  std::string why;
  const NvjpegLibrary* lib = SharedNvjpeg(&why);
  if (lib == nullptr) {
    EXPECT_THAT(why, HasSubstr("nvJPEG"));
    GTEST_SKIP() << "no nvJPEG on this machine: " << why;
  }
  EXPECT_EQ(SharedNvjpeg(), lib) << "loaded once";
  EXPECT_NE(lib->api().nvjpegCreateExV2, nullptr);
  const std::string version = lib->version();
  EXPECT_THAT(version, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  std::cout << "nvJPEG " << version << " from " << lib->path() << "\n";
}

}  // namespace
}  // namespace conveyor::nvjpeg
