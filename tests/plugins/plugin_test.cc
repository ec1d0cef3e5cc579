// Loads the example plugin built by Bazel, runs its operator on CPU and GPU and from YAML, and
// checks every loader error on deliberately broken libraries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/op/harness.h"
#include "core/op/plugin.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/yaml_loader.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;

const std::string kDir = "tests/plugins/";

std::string LoadError(const std::string& path) {
  try {
    LoadPlugin(path);
  } catch (const PluginError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << ": expected a PluginError";
  return "";
}

TensorListCPU RandomBatch(const std::vector<Shape>& shapes) {
  std::vector<std::vector<float>> values;
  for (const Shape& s : shapes) values.push_back(testing::RandomVector<float>(static_cast<size_t>(s.num_elements()), -10.f, 10.f));
  return MakeBatch<float>(shapes, values);
}

void ExpectScaled(const TensorListCPU& out, const TensorListCPU& in, const std::vector<float>& factors, float bias) {
  ASSERT_EQ(out.shapes(), in.shapes());
  for (int s = 0; s < in.num_samples(); ++s) {
    const float* x = static_cast<const float*>(in.raw_sample(s));
    const float* y = static_cast<const float*>(out.raw_sample(s));
    for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
      ASSERT_EQ(y[j], std::fma(x[j], factors[static_cast<size_t>(s)], bias)) << "sample " << s << " element " << j;
    }
  }
}

TEST(Plugin, LoadsAndRegistersItsOperator) {
  const PluginInfo info = LoadPlugin(kDir + "libexample_scale.so");
  EXPECT_EQ(info.operators, std::vector<std::string>{"example.scale"});
  const OpSchema& schema = OpRegistry::Global().Schema("example.scale");
  EXPECT_TRUE(schema.SupportsDevice(Device::kGpu));
  EXPECT_THAT(OpRegistry::Global().Get("example.scale").origin, HasSubstr("libexample_scale.so"));
  // Loading again is a no-op, not a duplicate.
  EXPECT_EQ(LoadPlugin(kDir + "libexample_scale.so").operators, info.operators);
}

TEST(Plugin, CpuOperatorRuns) {
  LoadPlugin(kDir + "libexample_scale.so");
  const TensorListCPU in = RandomBatch({{5, 3}, {0}, {17}});
  OpHarness h(OpSpec("example.scale", "s").AddInput("x").AddOutput("y").SetArg("bias", 0.25), Device::kCpu);
  h.SetInput(0, in);
  h.SetArgInput("factor", MakeBatch<float>({{}, {}, {}}, {{1.5f}, {-2.f}, {3.f}}));
  h.Run();
  ExpectScaled(h.OutputToHost(0), in, {1.5f, -2.f, 3.f}, 0.25f);
}

TEST(Plugin, GpuOperatorRuns) {
  CONVEYOR_REQUIRE_GPU();
  LoadPlugin(kDir + "libexample_scale.so");
  const TensorListCPU in = RandomBatch({{64, 3}, {1}, {1000}});
  OpHarness h(OpSpec("example.scale", "s").AddInput("x").AddOutput("y").SetArg("factor", -0.5).SetArg("bias", 7.0),
              Device::kGpu);
  h.SetInput(0, in);
  cuda::Stream stream = cuda::Stream::Create();
  h.Run(stream.view());
  ExpectScaled(h.OutputToHost(0), in, {-0.5f, -0.5f, -0.5f}, 7.f);
}

TEST(Plugin, LoadsFromYaml) {
  const PipelineSpec spec = LoadPipelineFile(kDir + "testdata/scale.yaml");
  ASSERT_EQ(spec.plugins.size(), 1u);
  EXPECT_THAT(spec.plugins[0], HasSubstr("tests/plugins/libexample_scale.so"));
  const Graph g = Graph::Build(spec, {.has_gpu = false});
  EXPECT_EQ(g.node("scaler").op(), "example.scale");
  EXPECT_FLOAT_EQ(g.node("scaler").spec.Arg<float>("factor"), 3.5f);
}

TEST(PluginErrors, MissingFile) {
  EXPECT_THAT(LoadError(kDir + "libnope.so"), HasSubstr("plugin tests/plugins/libnope.so: file not found"));
}

TEST(PluginErrors, NotASharedLibrary) {
  const std::string e = LoadError(kDir + "testdata/libnot_elf.so");
  EXPECT_THAT(e, HasSubstr("plugin tests/plugins/testdata/libnot_elf.so: cannot be loaded as a shared library: "));
  EXPECT_THAT(e, HasSubstr("libnot_elf.so"));  // dlerror's text names the file too
}

// The ELF checks made before dlopen (the loader trusts headers; found by fuzz/plugin's design):
// each damaged or foreign header is refused with what was wrong.
std::string ElfHeaderError(int elf_class, int data, int type, int machine, uint64_t phoff, int phnum) {
  std::string bytes(64 + 56, '\0');
  const char ident[] = {0x7f, 'E', 'L', 'F', static_cast<char>(elf_class), static_cast<char>(data), 1};
  bytes.replace(0, sizeof(ident), ident, sizeof(ident));
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
  };
  put(16, type, 2), put(18, machine, 2), put(32, phoff, 8), put(54, 56, 2), put(56, phnum, 2);
  const std::string path = ::testing::TempDir() + "/elf_header_" + std::to_string(type) + "_" +
                           std::to_string(machine) + "_" + std::to_string(elf_class) + "_" + std::to_string(phnum) + ".so";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return LoadError(path);
}

TEST(PluginErrors, ElfHeadersCheckedBeforeLoading) {
  EXPECT_THAT(ElfHeaderError(1, 1, 3, 62, 64, 1), HasSubstr("cannot be loaded as a shared library: not a 64-bit ELF file (class 1)"));
  EXPECT_THAT(ElfHeaderError(2, 2, 3, 62, 64, 1), HasSubstr("not a little-endian ELF file"));
  EXPECT_THAT(ElfHeaderError(2, 1, 2, 62, 64, 1), HasSubstr("not a shared object (ELF type 2, expected ET_DYN 3)"));
  EXPECT_THAT(ElfHeaderError(2, 1, 3, 183, 64, 1), HasSubstr("built for ELF machine 183, this host is 62"));
  EXPECT_THAT(ElfHeaderError(2, 1, 3, 62, 64, 3), HasSubstr("damaged ELF program header table"));
  EXPECT_THAT(ElfHeaderError(2, 1, 3, 62, 1 << 30, 1), HasSubstr("damaged ELF program header table"));
  EXPECT_THAT(LoadError(kDir + "testdata/libnot_elf.so"), HasSubstr("not an ELF file (no \\x7fELF magic)"));
}

TEST(PluginErrors, NotAPlugin) {
  const std::string e = LoadError(kDir + "libnot_a_plugin.so");
  EXPECT_THAT(e, HasSubstr("libnot_a_plugin.so: not a Conveyor plugin: no conveyor_plugin_abi_version symbol ("));
  EXPECT_THAT(e, HasSubstr("undefined symbol: conveyor_plugin_abi_version"));
}

TEST(PluginErrors, AbiMismatchIsCheckedFirst) {
  EXPECT_THAT(LoadError(kDir + "libwrong_abi.so"),
              HasSubstr("libwrong_abi.so: ABI version mismatch: the plugin was built for ABI 999, this Conveyor has "
                        "ABI 1; rebuild the plugin"));
  // Its static registration ran inside dlopen but was held back.
  EXPECT_EQ(OpRegistry::Global().Find("broken.wrong_abi"), nullptr);
}

TEST(PluginErrors, MissingRegisterSymbol) {
  EXPECT_THAT(LoadError(kDir + "libno_register.so"),
              HasSubstr("libno_register.so: missing symbol conveyor_plugin_register ("));
}

TEST(PluginErrors, DuplicateOperatorName) {
  EXPECT_THAT(LoadError(kDir + "libduplicate.so"),
              HasSubstr("libduplicate.so: operator \"copy\" is already registered (by built-in); a second "
                        "registration came from plugin tests/plugins/libduplicate.so"));
  // All or nothing: its other operator did not land either.
  EXPECT_EQ(OpRegistry::Global().Find("broken.fresh"), nullptr);
}

}  // namespace
}  // namespace conveyor
