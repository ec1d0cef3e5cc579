// Plugins loaded on demand (core/op/plugin.h): where they are looked for, which copy loads, and the
// error that names the operator, the plugin, every folder with what happened there (dlerror's text)
// and what to install or set — directly, through YAML and through Graph::Build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/plugin.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/yaml_loader.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  return dir.string();
}

// The folder of the built plugins (this test's runfiles).
std::string PluginsDir() { return fs::absolute("tests/plugins").string(); }

std::string ExecutableDir() { return fs::canonical("/proc/self/exe").parent_path().string(); }

// Restores CONVEYOR_PLUGIN_PATH when the test ends.
class PluginPathScope {
 public:
  explicit PluginPathScope(const char* value) {
    if (const char* old = std::getenv("CONVEYOR_PLUGIN_PATH")) old_ = old;
    value ? setenv("CONVEYOR_PLUGIN_PATH", value, 1) : unsetenv("CONVEYOR_PLUGIN_PATH");
  }
  ~PluginPathScope() { old_ ? setenv("CONVEYOR_PLUGIN_PATH", old_->c_str(), 1) : unsetenv("CONVEYOR_PLUGIN_PATH"); }

 private:
  std::optional<std::string> old_;
};

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const PluginError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a PluginError";
  return "";
}

TEST(PluginSearchFolders, PluginPathFirstThenTheExecutablesFolder) {
  PluginPathScope path("/opt/a::/opt/b:/opt/a:");
  const std::vector<PluginFolder> folders = PluginSearchFolders();
  ASSERT_EQ(folders.size(), 3u) << "empty entries and repeats dropped; the core is in this executable";
  EXPECT_EQ(folders[0].path, "/opt/a");
  EXPECT_EQ(folders[0].why, "CONVEYOR_PLUGIN_PATH");
  EXPECT_EQ(folders[1].path, "/opt/b");
  EXPECT_EQ(folders[2].path, ExecutableDir());
  EXPECT_EQ(folders[2].why, "the folder of the executable");
}

TEST(PluginSearchFolders, WithoutThePathTheExecutablesFolder) {
  PluginPathScope path(nullptr);
  const std::vector<PluginFolder> folders = PluginSearchFolders();
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(folders[0].path, ExecutableDir());
}

TEST(OnDemand, KnownOperatorsNeedNoPluginUnknownOnesGiveNull) {
  const std::vector<OnDemandPlugin> none;
  EXPECT_EQ(FindOrLoadOperator("copy", OpRegistry::Global(), {.plugins = &none, .folders = std::nullopt}),
            OpRegistry::Global().Find("copy"));
  EXPECT_EQ(FindOrLoadOperator("no.such_op"), nullptr) << "no plugin provides it: the caller names it unknown";
}

TEST(OnDemand, ShippedTableNamesTheVideoPlugin) {
  const std::vector<OnDemandPlugin>& plugins = OnDemandPlugins();
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].file, "libconveyor_video.so");
  EXPECT_EQ(plugins[0].operators, (std::vector<std::string>{"readers.video", "decoders.video"}));
  EXPECT_THAT(plugins[0].needs, HasSubstr("apt-get install libavformat59 libavcodec59 libswscale6"));
}

// A typo of an on-demand operator is answered with its name before its plugin is loaded (this
// binary never loads the video plugin into the global registry unless a test below does; the name
// comes from the table either way).
TEST(OnDemand, TyposOfOnDemandOperatorsAreSuggestedThem) {
  EXPECT_EQ(OpRegistry::Global().Suggest("readers.vidoe"), "; did you mean \"readers.video\"?");
  EXPECT_EQ(OpRegistry::Global().Suggest("decoder.video"), "; did you mean \"decoders.video\"?");
  EXPECT_EQ(OpRegistry::Global().Suggest("completely_unrelated_name"), "");
}

TEST(OnDemand, LoadsTheFirstCopyThatLoads) {
  // Folder 1 has none, folder 2 a damaged copy, folder 3 the real plugin.
  const std::string empty = FreshDir("empty"), damaged = FreshDir("damaged");
  fs::copy_file("tests/plugins/testdata/libnot_elf.so", damaged + "/libexample_scale.so");
  const std::vector<OnDemandPlugin> table = {{"libexample_scale.so", {"example.scale"}, "nothing"}};
  ASSERT_EQ(OpRegistry::Global().Find("example.scale"), nullptr);
  const OpRegistry::Entry* entry = FindOrLoadOperator(
      "example.scale", OpRegistry::Global(),
      {.plugins = &table, .folders = std::vector<PluginFolder>{{empty, "a"}, {damaged, "b"}, {PluginsDir(), "c"}}});
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->schema.name(), "example.scale");
  EXPECT_EQ(entry->origin, "plugin " + PluginsDir() + "/libexample_scale.so");
  EXPECT_EQ(OpRegistry::Global().Find("example.scale"), entry);
}

TEST(OnDemand, NoLoadableCopyNamesTheOpThePluginEachFolderAndTheFix) {
  const std::string empty = FreshDir("empty");
  const std::vector<OnDemandPlugin> table = {
      {"libunresolved.so", {"example.unresolved"}, "the test library (apt-get install libtest1)"}};
  const std::string error = ErrorOf([&] {
    FindOrLoadOperator("example.unresolved", OpRegistry::Global(),
                       {.plugins = &table,
                        .folders = std::vector<PluginFolder>{{empty, "CONVEYOR_PLUGIN_PATH"},
                                                             {PluginsDir(), "the folder of the executable"}}});
  });
  EXPECT_THAT(error, HasSubstr("operator \"example.unresolved\" comes in the plugin libunresolved.so, which could "
                               "not be loaded. Tried: " + empty + " (CONVEYOR_PLUGIN_PATH): no libunresolved.so; " +
                               PluginsDir() + " (the folder of the executable): plugin " + PluginsDir() +
                               "/libunresolved.so: cannot be loaded as a shared library: "));
  EXPECT_THAT(error, HasSubstr("undefined symbol: conveyor_test_symbol_no_host_has")) << "dlerror's text";
  EXPECT_THAT(error, HasSubstr(". libunresolved.so needs the test library (apt-get install libtest1); put it in one "
                               "of these folders, or name its folder in CONVEYOR_PLUGIN_PATH (folders separated by "
                               "colons)"));
  EXPECT_EQ(OpRegistry::Global().Find("example.unresolved"), nullptr);
}

TEST(OnDemand, NotELFCopyGivesItsReason) {
  const std::string dir = FreshDir("not_elf");
  fs::copy_file("tests/plugins/testdata/libnot_elf.so", dir + "/libnot_elf.so");
  const std::vector<OnDemandPlugin> table = {{"libnot_elf.so", {"example.not_elf"}, "x"}};
  const std::string error = ErrorOf([&] {
    FindOrLoadOperator("example.not_elf", OpRegistry::Global(),
                       {.plugins = &table, .folders = std::vector<PluginFolder>{{dir, "d"}}});
  });
  EXPECT_THAT(error, HasSubstr(dir + " (d): plugin " + dir + "/libnot_elf.so: cannot be loaded as a shared library: "
                               "not an ELF file"));
}

// The shipped table through the pipeline's two entry points; the video plugin is in none of the
// folders this test searches (its own folder holds only its data).
TEST(OnDemand, YamlNamingAVideoOperatorWithoutThePluginSaysWhereItLooked) {
  const std::string empty = FreshDir("no_plugin");
  PluginPathScope path(empty.c_str());
  const std::string yaml =
      "pipeline: {batch_size: 2, device: cpu}\n"
      "ops:\n"
      "  - op: readers.video\n"
      "    name: reader\n"
      "    args: {file_root: /nowhere, sequence_length: 4}\n"
      "    outputs: [clips, labels]\n"
      "outputs: [clips]\n";
  const std::string error = ErrorOf([&] { ParsePipelineYaml(yaml, "video.yaml"); });
  EXPECT_THAT(error, HasSubstr("video.yaml:3:9: op \"readers.video\" (reader): operator \"readers.video\" comes in the "
                               "plugin libconveyor_video.so, which could not be loaded. Tried: " + empty +
                               " (CONVEYOR_PLUGIN_PATH): no libconveyor_video.so; " + ExecutableDir() +
                               " (the folder of the executable): no libconveyor_video.so. libconveyor_video.so needs "
                               "FFmpeg's libraries"));
  EXPECT_THAT(error, HasSubstr("apt-get install libavformat59 libavcodec59 libswscale6"));
  EXPECT_THAT(error, Not(HasSubstr("unknown operator")));
}

TEST(OnDemand, GraphBuildOfASpecMadeInCodeLoadsOrNamesThePluginToo) {
  const std::string empty = FreshDir("no_plugin");
  PluginPathScope path(empty.c_str());
  PipelineSpec spec;
  spec.batch_size = 2;
  spec.device = DeviceRequest::kCpu;
  OpSpec reader("decoders.video", "dec");
  reader.AddInput("encoded").AddOutput("clips");
  spec.ops.push_back(reader);
  spec.outputs = {"clips"};
  const std::string error = ErrorOf([&] { Graph::Build(spec, {.has_gpu = false}); });
  EXPECT_THAT(error, HasSubstr("op \"decoders.video\" (dec): operator \"decoders.video\" comes in the plugin "
                               "libconveyor_video.so, which could not be loaded. Tried: " + empty));
}

}  // namespace
}  // namespace conveyor
