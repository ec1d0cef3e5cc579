#include "core/op/plugin.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/op/spec.h"

namespace conveyor {

namespace {

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "no dlerror text";
}

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw PluginError("plugin " + path + ": " + what);
}

// Closes the library unless released: a plugin that failed must not stay mapped.
// What dlopen would map, checked first: the dynamic loader trusts ELF headers and program headers
// (a damaged file can crash it), so every file is read and refused here unless it is a 64-bit
// little-endian shared object for this machine whose program headers lie inside the file.
// Returns "" or the reason.
std::string CheckElf(const std::string& path, off_t file_size) {
  std::ifstream in(path, std::ios::binary);
  // The headers sit at the start; 1 MiB holds any real program header table.
  std::vector<char> bytes(static_cast<size_t>(std::min<off_t>(file_size, 1 << 20)));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return "cannot read the file";
  const size_t size = bytes.size();
  const uint64_t whole = static_cast<uint64_t>(file_size);
  if (size < 4 || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) return "not an ELF file (no \\x7fELF magic)";
  Elf64_Ehdr eh;
  if (size < sizeof(eh)) return "truncated ELF header (" + std::to_string(size) + " bytes)";
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file (class " + std::to_string(eh.e_ident[EI_CLASS]) + ")";
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return "not a little-endian ELF file";
  if (eh.e_type != ET_DYN) return "not a shared object (ELF type " + std::to_string(eh.e_type) + ", expected ET_DYN 3)";
#if defined(__x86_64__)
  constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
  constexpr int kMachine = EM_AARCH64;
#else
  constexpr int kMachine = -1;
#endif
  if (kMachine >= 0 && eh.e_machine != kMachine) {
    return "built for ELF machine " + std::to_string(eh.e_machine) + ", this host is " + std::to_string(kMachine);
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phoff > size ||
      (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum) {
    return "damaged ELF program header table";
  }
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof(Elf64_Phdr), sizeof(ph));
    if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) &&
        (ph.p_offset > whole || ph.p_filesz > whole - ph.p_offset || ph.p_filesz > ph.p_memsz)) {
      return "damaged ELF program header " + std::to_string(i) + " (segment outside the file)";
    }
  }
  return "";
}

struct LibraryCloser {
  void* handle;
  ~LibraryCloser() {
    if (handle) dlclose(handle);
  }
};

// Restores the registry capture even when registration throws.
struct CaptureScope {
  explicit CaptureScope(OpRegistry::Pending* p) : previous(OpRegistry::SetCapture(p)) {}
  ~CaptureScope() { OpRegistry::SetCapture(previous); }
  OpRegistry::Pending* previous;
};

}  // namespace

void PluginRegistrar::Add(const OpSchema& schema, OperatorFactory factory) {
  schema.Validate();
  pending_->entries.push_back({schema, std::move(factory), origin_});
}

PluginInfo LoadPlugin(const std::string& path, OpRegistry& registry) {
  // One load at a time: the capture of static registrations is per thread, and dlopen of the same
  // file twice must not register twice.
  static std::mutex mutex;
  static std::map<std::string, PluginInfo> loaded;
  std::lock_guard lock(mutex);

  struct stat st;
  if (::stat(path.c_str(), &st) != 0) Fail(path, "file not found");
  char resolved[PATH_MAX];
  const std::string key = ::realpath(path.c_str(), resolved) ? resolved : path;
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  // Declared first so it is destroyed last: the pending entries' factories live in the library.
  if (const std::string bad = CheckElf(path, st.st_size); !bad.empty()) {
    Fail(path, "cannot be loaded as a shared library: " + bad);
  }

  LibraryCloser library{nullptr};
  OpRegistry::Pending pending;
  {
    // Static OperatorRegistration objects in the plugin run inside dlopen: hold them back.
    CaptureScope capture(&pending);
    dlerror();
    library.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!library.handle) Fail(path, "cannot be loaded as a shared library: " + DlError());

  // The ABI version first: nothing else in the plugin is trusted before it matches.
  dlerror();
  auto abi = reinterpret_cast<ConveyorPluginAbiVersionFn>(dlsym(library.handle, "conveyor_plugin_abi_version"));
  if (!abi) Fail(path, "not a Conveyor plugin: no conveyor_plugin_abi_version symbol (" + DlError() + ")");
  const uint32_t version = abi();
  if (version != kPluginAbiVersion) {
    Fail(path, "ABI version mismatch: the plugin was built for ABI " + std::to_string(version) +
                   ", this Conveyor has ABI " + std::to_string(kPluginAbiVersion) + "; rebuild the plugin");
  }
  dlerror();
  auto reg = reinterpret_cast<ConveyorPluginRegisterFn>(dlsym(library.handle, "conveyor_plugin_register"));
  if (!reg) Fail(path, "missing symbol conveyor_plugin_register (" + DlError() + ")");

  // Entries captured from static objects carry "built-in" as origin; they belong to the plugin.
  for (OpRegistry::Entry& e : pending.entries) e.origin = "plugin " + path;
  PluginRegistrar registrar(&pending, "plugin " + path);
  try {
    reg(&registrar);
  } catch (const std::exception& e) {
    Fail(path, std::string("conveyor_plugin_register failed: ") + e.what());
  }
  PluginInfo info{path, {}};
  for (const OpRegistry::Entry& e : pending.entries) info.operators.push_back(e.schema.name());
  try {
    registry.Commit(std::move(pending));
  } catch (const InvalidArgument& e) {
    Fail(path, e.what());
  }
  library.handle = nullptr;  // registered factories point into it: keep it loaded for good
  loaded[key] = info;
  return info;
}

// ---- On-demand plugins ----

const std::vector<OnDemandPlugin>& OnDemandPlugins() {
  static const std::vector<OnDemandPlugin> plugins = {
      {"libconveyor_video.so",
       {"readers.video", "decoders.video"},
       "FFmpeg's libraries libavformat.so.59, libavcodec.so.59, libavutil.so.57 and libswscale.so.6 (Debian 12 / "
       "Ubuntu: apt-get install libavformat59 libavcodec59 libswscale6)"},
  };
  return plugins;
}

namespace {

std::string FolderOf(const std::string& file) {
  return std::filesystem::path(file).parent_path().string();
}

std::string Canonical(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

}  // namespace

std::vector<PluginFolder> PluginSearchFolders() {
  std::vector<PluginFolder> folders;
  auto add = [&](const std::string& path, const std::string& why) {
    if (path.empty()) return;
    for (const PluginFolder& f : folders) {
      if (f.path == path) return;
    }
    folders.push_back({path, why});
  };
  if (const char* list = std::getenv("CONVEYOR_PLUGIN_PATH")) {
    const std::string_view all(list);
    for (size_t begin = 0; begin <= all.size();) {
      const size_t end = std::min(all.find(':', begin), all.size());
      add(std::string(all.substr(begin, end - begin)), "CONVEYOR_PLUGIN_PATH");
      begin = end + 1;
    }
  }
  const std::string exe = Canonical("/proc/self/exe");
  add(FolderOf(exe), "the folder of the executable");
  // The object this function is linked into: the executable, or libconveyor_c.so.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PluginSearchFolders), &info) != 0 && info.dli_fname != nullptr) {
    const std::string core = Canonical(info.dli_fname);
    if (core != exe) add(FolderOf(core), "the folder of " + std::filesystem::path(core).filename().string());
  }
  return folders;
}

const OpRegistry::Entry* FindOrLoadOperator(std::string_view op, OpRegistry& registry,
                                            const OnDemandOptions& options) {
  if (const OpRegistry::Entry* entry = registry.Find(op)) return entry;
  const std::vector<OnDemandPlugin>& plugins = options.plugins ? *options.plugins : OnDemandPlugins();
  const auto provider = std::find_if(plugins.begin(), plugins.end(), [&](const OnDemandPlugin& p) {
    return std::find(p.operators.begin(), p.operators.end(), op) != p.operators.end();
  });
  if (provider == plugins.end()) return nullptr;
  const std::vector<PluginFolder> folders = options.folders ? *options.folders : PluginSearchFolders();

  std::string tried;
  for (const PluginFolder& folder : folders) {
    const std::string path = (std::filesystem::path(folder.path) / provider->file).string();
    tried += (tried.empty() ? "" : "; ") + folder.path + " (" + folder.why + "): ";
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      tried += "no " + provider->file;
      continue;
    }
    try {
      LoadPlugin(path, registry);
    } catch (const PluginError& e) {
      tried += e.what();
      continue;
    }
    if (const OpRegistry::Entry* entry = registry.Find(op)) return entry;
    tried += "loaded, but it did not register \"" + std::string(op) + "\"";
  }
  throw PluginError("operator \"" + std::string(op) + "\" comes in the plugin " + provider->file +
                    ", which could not be loaded. Tried: " + (tried.empty() ? "no folder" : tried) + ". " +
                    provider->file + " needs " + provider->needs + "; put it in one of these folders, or name its "
                    "folder in CONVEYOR_PLUGIN_PATH (folders separated by colons)");
}

const OpRegistry::Entry* FindOrLoadOperator(const OpSpec& node, OpRegistry& registry, const OnDemandOptions& options) {
  try {
    return FindOrLoadOperator(node.op(), registry, options);
  } catch (const PluginError& e) {
    // SpecError positions the text (file:line:col: op "x" (name): ...); the type stays PluginError.
    throw PluginError(SpecError(node, "op", e.what()).what());
  }
}

}  // namespace conveyor
